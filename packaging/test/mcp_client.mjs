// One session of the official TypeScript MCP client (`@modelcontextprotocol/sdk`, `Client`
// over `StdioClientTransport`) with an installed `metis-memory`, as an MCP client's
// configuration starts it (run by scripts/test-cli-packages, from a folder where the SDK
// is installed):
//
//   node mcp_client.mjs VERSION WORKSPACE COMMAND [ARG...]
//
// starts the server as COMMAND ARG... (found on PATH, in the current directory, with the
// caller's environment), initializes (the server must report VERSION), lists the tools and
// adds an entry to WORKSPACE's MEMORY.md with `memory_add`, checked on disk.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const PATIENCE_MS = 60_000;
const [version, workspace, command, ...args] = process.argv.slice(2);

const transport = new StdioClientTransport({
  command,
  args,
  cwd: process.cwd(),
  env: { ...process.env },
  stderr: 'inherit',
});
const client = new Client({ name: 'metis-memory-cli-packages-test', version: '0.0.0' });
await client.connect(transport, { timeout: PATIENCE_MS });
try {
  assert.equal(client.getServerVersion()?.version, version, 'serverInfo.version');
  const { tools } = await client.listTools(undefined, { timeout: PATIENCE_MS });
  const names = tools.map((tool) => tool.name);
  for (const name of ['memory_add', 'memory_replace', 'memory_consolidate']) {
    assert.ok(names.includes(name), `tools: ${names}`);
  }
  const entry = `- served by ${command} from the installed package`;
  const result = await client.callTool(
    { name: 'memory_add', arguments: { file: 'MEMORY.md', entry } },
    undefined,
    { timeout: PATIENCE_MS },
  );
  assert.ok(!result.isError, JSON.stringify(result));
  const memory = readFileSync(join(workspace, '.metis', 'MEMORY.md'), 'utf8');
  assert.ok(memory.includes(entry), memory);
} finally {
  await client.close();
}
console.log(`typescript mcp client: ${command} ${args.join(' ')}: initialize, listTools, memory_add ok`);
