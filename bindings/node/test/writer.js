// A writer process for concurrency.test.js: `node writer.js ROOT TAG COUNT [--signal]`
// adds COUNT entries `TAG-i` to MEMORY.md and prints one JSON line per add. With
// --signal it prints "contended" the first time its attempt to take the lock finds the
// lock held (link-at answered `exist`), so the parent can release a lock it planted
// exactly when this writer is known to be waiting for it.
import fs from "node:fs";
import { openWorkspace } from "metis-memory";
import { withHook } from "./shim-hooks.js";

const [root, tag, count, flag] = process.argv.slice(2);
const ws = openWorkspace(root);
let signalled = false;

async function run() {
  for (let i = 0; i < Number(count); i += 1) {
    try {
      const r = await ws.addEntry("MEMORY.md", `${tag}-${i}`);
      fs.writeSync(1, `${JSON.stringify({ ok: true, before: r.beforeHash, after: r.afterHash })}\n`);
    } catch (e) {
      fs.writeSync(1, `${JSON.stringify({ ok: false, kind: e.kind, message: e.message })}\n`);
    }
  }
}

if (flag === "--signal") {
  await withHook((name, args, call) => {
    try {
      return call();
    } catch (e) {
      if (name === "linkAt" && args[3] === ".MEMORY.md.lock" && e === "exist" && !signalled) {
        signalled = true;
        fs.writeSync(1, "contended\n");
      }
      throw e;
    }
  }, run);
} else {
  await run();
}
