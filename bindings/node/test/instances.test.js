// Which instance a call runs on. Reads share one the workspace keeps (index.js,
// `Workspace.#read`), as the Rust host's `KeptInstance`; these show it isolates as a
// fresh instance would: every read sees the disk as it is now, fuel is whole for every
// call, a trap or a large call drops it, and `.metis` is checked before every read and
// only read through an instance made for the directory there now. Writes get a fresh
// instance each.

import { test } from "node:test";
import { instancesMade } from "./instances-made.js";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidUtf8Error, TrapError, WorkspaceError, openWorkspace } from "metis-memory";
import { withHook } from "./shim-hooks.js";

const M = "MEMORY.md";

function workspace(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-instances-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const metis = path.join(root, ".metis");
  const put = (text) => {
    fs.mkdirSync(metis, { recursive: true });
    fs.writeFileSync(path.join(metis, M), text);
  };
  return { root, metis, put, ws: openWorkspace(root) };
}


test("reads share one instance; every write gets a fresh one", async (t) => {
  const { put, ws } = workspace(t);
  put("- one\n");
  await ws.read(M);
  const reads = await instancesMade(async () => {
    for (let i = 0; i < 5; i++) assert.equal(await ws.read(M), "- one\n");
    assert.match(await ws.assembleSystemPrompt("base"), /^base\n[^]*- one/);
    assert.equal((await ws.toolDefinitions()).length > 0, true);
  });
  assert.equal(reads.made, 0);
  const writes = await instancesMade(async () => {
    for (let i = 0; i < 3; i++) await ws.addEntry(M, `- w${i}`);
  });
  assert.equal(writes.made, 3);
});

test("every read on the kept instance sees the disk as it is now", async (t) => {
  const { metis, put, ws } = workspace(t);
  put("- one\n");
  assert.equal(await ws.read(M), "- one\n");
  const { made } = await instancesMade(async () => {
    put("- two\n"); // the same size: only the bytes tell
    assert.equal(await ws.read(M), "- two\n");
    put("- three, longer\n");
    assert.equal(await ws.sizeBytes(M), 16);
    assert.match(await ws.assembleSystemPrompt(""), /- three, longer/);
    fs.rmSync(path.join(metis, M));
    assert.equal(await ws.exists(M), false);
    assert.equal(await ws.read(M), "");
  });
  assert.equal(made, 0, "these reads ran on the kept instance");
});

/** The least fuel a read of `text` needs, by bisection, each probe on its own workspace. */
async function leastFuelToRead(root, put, text) {
  put(text);
  let [low, high] = [0, 10_000_000];
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const ok = await openWorkspace(root, { limits: { fuel: middle } })
      .read(M)
      .then(() => true, (e) => (e instanceof TrapError ? false : Promise.reject(e)));
    [low, high] = ok ? [low, middle] : [middle, high];
  }
  return high;
}

test("fuel is whole for every read; running out drops the kept instance", async (t) => {
  const { root, put } = workspace(t);
  const needed = await leastFuelToRead(root, put, "- small\n");
  const ws = openWorkspace(root, { limits: { fuel: needed + Math.ceil(needed / 10) } });
  // Had the fuel not been set afresh, the second read would run on what the first left.
  for (let i = 0; i < 3; i++) assert.equal(await ws.read(M), "- small\n");
  put("- a much longer file that costs more fuel to read and return\n".repeat(60));
  const trapped = await ws.read(M).catch((e) => e);
  assert.ok(trapped instanceof TrapError && /ran out of fuel/.test(trapped.message), String(trapped));
  put("- small\n");
  const { made } = await instancesMade(async () => {
    for (let i = 0; i < 3; i++) assert.equal(await ws.read(M), "- small\n");
  });
  assert.equal(made, 1, "the trapped instance was dropped, and its successor kept");
});

test("a host call that throws mid-read drops the kept instance; the next read works", async (t) => {
  const { put, ws } = workspace(t);
  put("- one\n");
  assert.equal(await ws.read(M), "- one\n");
  const trapped = await withHook((name, args, call) => {
    if (name === "read") throw new Error("injected trap");
    return call();
  }, () => ws.read(M).catch((e) => e));
  assert.ok(trapped instanceof TrapError && /injected trap/.test(trapped.message), String(trapped));
  const { made } = await instancesMade(async () => {
    assert.equal(await ws.read(M), "- one\n");
    assert.equal(await ws.read(M), "- one\n");
  });
  assert.equal(made, 1);
});

test("a refusal keeps the instance; a read that grew its memory past 8 MiB drops it", async (t) => {
  const { put, ws } = workspace(t);
  put("- one\n");
  await ws.read(M);
  const refused = await instancesMade(async () => {
    put(Buffer.from([0x2d, 0x20, 0xff, 0x0a]));
    await assert.rejects(ws.read(M), InvalidUtf8Error);
    put("- one\n");
    assert.equal(await ws.read(M), "- one\n");
  });
  assert.equal(refused.made, 0);
  const large = await instancesMade(async () => {
    const base = "x".repeat(9 << 20);
    const prompt = await ws.assembleSystemPrompt(base);
    assert.ok(prompt.startsWith(base) && prompt.endsWith("- one"));
    assert.equal(await ws.read(M), "- one\n");
    assert.equal(await ws.read(M), "- one\n");
  });
  assert.equal(large.made, 1, "the grown instance was dropped after its call");
});

test(".metis replaced by a symbolic link between two reads is refused on the second", async (t) => {
  const { root, metis, put, ws } = workspace(t);
  put("- here\n");
  assert.equal(await ws.read(M), "- here\n");
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-elsewhere-"));
  t.after(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
  fs.writeFileSync(path.join(elsewhere, M), "- another project's memory\n");
  fs.renameSync(metis, path.join(root, "old-metis"));
  fs.symlinkSync(elsewhere, metis);
  const refused = await ws.read(M).catch((e) => e);
  assert.ok(refused instanceof WorkspaceError, String(refused));
  assert.match(refused.message, /is a symbolic link/);
  await assert.rejects(ws.assembleSystemPrompt(""), WorkspaceError);
  // Followed on purpose, the link is read through an instance made for its target.
  const followed = openWorkspace(root, { followMetisLink: true });
  fs.unlinkSync(metis);
  fs.renameSync(path.join(root, "old-metis"), metis);
  assert.equal(await followed.read(M), "- here\n");
  fs.renameSync(metis, path.join(root, "old-metis"));
  fs.symlinkSync(elsewhere, metis);
  assert.equal(await followed.read(M), "- another project's memory\n");
});

test(".metis created, replaced or removed after a read is what the next read sees", async (t) => {
  const { root, metis, put, ws } = workspace(t);
  assert.equal(await ws.read(M), "");
  const { made } = await instancesMade(async () => {
    put("- created after the first read\n");
    assert.equal(await ws.read(M), "- created after the first read\n");
    fs.renameSync(metis, path.join(root, "old-metis"));
    put("- a new directory\n");
    assert.equal(await ws.read(M), "- a new directory\n");
    fs.rmSync(metis, { recursive: true });
    assert.equal(await ws.read(M), "");
    assert.equal(await ws.exists(M), false);
  });
  assert.equal(made, 3, "one instance for each .metis seen: created, replaced, gone");
});

test("instantiating throws nothing: every JSPI probe in the installed code asks first", () => {
  // transpile.mjs rewrites jco's `try { WebAssembly.promising(...) } catch`, since each
  // throw cost 3 ms on an engine without JSPI (28 ms an instance).
  const gen = fileURLToPath(new URL("./gen/metis_memory.js", import.meta.resolve("metis-memory")));
  const code = fs.readFileSync(gen, "utf8");
  const calls = code.split("WebAssembly.promising(").length - 1;
  const guarded = code.split('typeof WebAssembly.promising === "function" ? WebAssembly.promising(').length - 1;
  assert.ok(calls > 0);
  assert.equal(guarded, calls);
});
