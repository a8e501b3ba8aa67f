// Times the Node package (`metis-memory`, installed from the npm tarball) as an agent host
// uses it, and prints the per-call times in microseconds as JSON, with the same operations
// and arguments as the Rust bench. Usage: node node_host.mjs PACKAGE_DIR WORKSPACE CALLS
// (PACKAGE_DIR: the node_modules/metis-memory the tarball was installed into).

import path from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, workspace, callsText] = process.argv.slice(2);
const calls = Number(callsText);
const { openWorkspace } = await import(pathToFileURL(path.join(packageDir, "index.js")).href);
const ws = openWorkspace(workspace);
const M = "MEMORY.md";
const BASE = Array.from({ length: 40 }, (_, i) => `- remembered fact ${i} about the build\n`).join("");
const TOOL_ADD = '{"file":"MEMORY.md","entry":"- deploys go through scripts/deploy"}';
const TOOL_REFUSED = '{"file":"NOTES.md","entry":"x"}';

async function timed(call, between = async () => {}) {
  for (let i = 0; i < 20; i++) {
    await call(i);
    await between(i);
  }
  const out = [];
  for (let i = 0; i < calls; i++) {
    const started = process.hrtime.bigint();
    await call(i);
    out.push(Number(process.hrtime.bigint() - started) / 1000);
    await between(i);
  }
  return out;
}

await ws.consolidate(M, BASE);
await ws.consolidate("USER.md", "- prefers tea\n");
const reset = () => ws.consolidate(M, BASE);
const refused = (i) => ws.callTool("memory_add", TOOL_REFUSED).catch(() => {});
const times = {
  read: await timed(() => ws.read(M)),
  assemble: await timed(() => ws.assembleSystemPrompt("You are helpful.")),
  add: await timed(() => ws.addEntry(M, "- one more fact"), reset),
  replace: await timed((i) => (i % 2 === 0 ? ws.replace(M, "fact 7 ", "fact 7x ") : ws.replace(M, "fact 7x ", "fact 7 "))),
  consolidate: await timed((i) => ws.consolidate(M, i % 2 ? BASE : `${BASE}- x\n`)),
  tool: await timed(() => ws.callTool("memory_add", TOOL_ADD), reset),
  refused: await timed(refused),
};
console.log(JSON.stringify(times));
