// What both node:test files share: the server under test, a temporary workspace, and a
// connection to `metis-memory mcp` made by the official TypeScript SDK (`Client` over
// `StdioClientTransport`, which spawns the server). Run by scripts/test-mcp, which sets
// METIS_MEMORY_BIN and METIS_REPO_ROOT.

import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const BIN = required('METIS_MEMORY_BIN');
export const ROOT = required('METIS_REPO_ROOT');

// A bound on a broken server, never a wait for something to happen: every request
// waits for its own answer.
export const PATIENCE_MS = 60_000;

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests with scripts/test-mcp`);
  return value;
}

/** A temporary workspace: `given` (file name to text) written into its `.metis/`. */
/** The bytes at `path`, or null when nothing is there. */
export function bytesOrNull(path) {
  try {
    return readFileSync(path);
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw error;
  }
}

export class Workspace {
  constructor(given = {}) {
    this.root = mkdtempSync(join(tmpdir(), 'metis-mcp-ts-'));
    for (const [name, text] of Object.entries(given)) this.put(name, text);
  }

  path(name) {
    return join(this.root, '.metis', name);
  }

  put(name, text) {
    mkdirSync(join(this.root, '.metis'), { recursive: true });
    writeFileSync(this.path(name), text);
  }

  /** The file's bytes as they are on disk, or null when it is missing. */
  bytes(name) {
    return bytesOrNull(this.path(name));
  }

  /** The file's text as it is on disk, or null when it is missing. */
  read(name) {
    return this.bytes(name)?.toString('utf8') ?? null;
  }

  remove() {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * A connection to `metis-memory --workspace ROOT mcp ARGS`, initialized by `connect`:
 * `client.getInstructions()` and `client.getServerVersion()` are the initialize result's.
 * The server's stderr is kept in `stderr()`, for failure messages.
 */
export async function connect(root, ...args) {
  return connectWith(root, { args });
}

/**
 * `connect`, with the server's options given: `args` after `mcp` (the CLI's global flags,
 * such as `--global-user write`, are valid there too) and `env`, variables the server
 * gets besides the cache directory (such as `HOME`, where it finds the user's own
 * `.metis/`).
 */
export async function connectWith(root, { args = [], env = {} } = {}) {
  return spawnClient([BIN, '--workspace', root, 'mcp', ...args], env);
}

/** `connectWith`, with the server run by `tests/surfaces/under CAUSE ROOT` (see there);
 * `null` when this machine cannot set `cause` up (`under` exits 77), after saying so. */
export async function connectUnder(cause, root, { args = [], env = {} } = {}) {
  const under = join(ROOT, 'tests', 'surfaces', 'under');
  const check = spawnSync(under, [cause, root, 'true'], { encoding: 'utf8' });
  if (check.status === 77) {
    console.log(`skipped: ${check.stderr.trim()}`);
    return null;
  }
  return spawnClient([under, cause, root, BIN, '--workspace', root, 'mcp', ...args], env);
}

/** The server's environment: the cache directory (`METIS_MEMORY_CACHE_DIR`, absolute,
 * set by scripts/test-mcp, else `off`; the server prefers it to any cache under `HOME`,
 * so a test's own `HOME` does not move it) and `env`. The SDK adds its default
 * variables (`PATH`, `HOME`, …) under these. */
function serverEnv(env) {
  return { METIS_MEMORY_CACHE_DIR: process.env.METIS_MEMORY_CACHE_DIR ?? 'off', ...env };
}

/** Connects to a server on `root` (with `connectWith`'s options) expecting it to refuse
 * at start: its stderr, all of it, or `null` if it served. */
export async function refusedAtStart(root, { args = [], env = {} } = {}) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['--workspace', root, 'mcp', ...args],
    env: serverEnv(env),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const ended = new Promise((resolve) => transport.stderr.on('end', resolve));
  const client = new Client({ name: 'metis-memory-mcp-ts-tests', version: '0.0.0' });
  const served = await client.connect(transport, { timeout: PATIENCE_MS }).then(
    () => true,
    () => false,
  );
  if (served) {
    await client.close();
    return null;
  }
  await ended;
  return stderr;
}

async function spawnClient([command, ...args], env = {}) {
  const transport = new StdioClientTransport({
    command,
    args,
    env: serverEnv(env),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const client = new Client({ name: 'metis-memory-mcp-ts-tests', version: '0.0.0' });
  await client.connect(transport, { timeout: PATIENCE_MS });
  return { client, stderr: () => stderr };
}

/** `tools/call`: whether it wrote (not `isError`) and its text content, all of it. */
export async function call(client, tool, input) {
  const result = await client.callTool({ name: tool, arguments: input }, undefined, {
    timeout: PATIENCE_MS,
  });
  return { ok: !result.isError, text: textOf(result), result };
}

export function textOf(result) {
  return result.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** The version of the WIT package declared in `path` (`package metis:memory@X;`). */
export function witVersion(path) {
  const found = /^package metis:memory@([^;\s]+);/m.exec(readFileSync(path, 'utf8'));
  if (!found) throw new Error(`no \`package metis:memory@…;\` line in ${path}`);
  return found[1];
}
