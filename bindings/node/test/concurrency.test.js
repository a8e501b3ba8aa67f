// The cross-process lock under preview2-shim: writers in separate Node processes lose no
// entry, a writer that finds the lock held waits for it, and a stale lock is broken.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { openWorkspace } from "metis-memory";

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const writer = new URL("./writer.js", import.meta.url).pathname;

function workspace(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-concurrency-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return { root, metis: path.join(root, ".metis") };
}

/** Starts a writer process; `lines` resolves to its output lines, `onLine` sees each. */
function startWriter(root, tag, count, flag, onLine = () => {}) {
  const child = spawn(process.execPath, [writer, root, tag, String(count), ...(flag ? [flag] : [])], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = [];
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    onLine(line);
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(lines) : reject(new Error(`writer ${tag} exited ${code}`))));
  });
}

test("writers in four processes at once lose no entry", async (t) => {
  const { root, metis } = workspace(t);
  fs.mkdirSync(metis);
  const tags = ["a", "b", "c", "d"];
  const perWriter = 10;
  const outputs = await Promise.all(tags.map((tag) => startWriter(root, tag, perWriter)));
  const results = outputs.flat().map((line) => JSON.parse(line));
  assert.equal(results.length, tags.length * perWriter);
  for (const r of results) assert.ok(r.ok, `a write failed: ${r.message}`);
  // No two writes were based on the same state, and the hash chain from the empty file
  // runs through every write to the final file.
  const byBefore = new Map(results.map((r) => [r.before, r.after]));
  assert.equal(byBefore.size, results.length, "two writes were based on the same state");
  const content = fs.readFileSync(path.join(metis, "MEMORY.md"));
  let hash = sha256("");
  for (let i = 0; i < results.length; i += 1) hash = byBefore.get(hash);
  assert.equal(hash, sha256(content));
  const lines = content.toString("utf8").trimEnd().split("\n").sort();
  const expected = tags.flatMap((tag) => Array.from({ length: perWriter }, (_, i) => `${tag}-${i}`)).sort();
  assert.deepEqual(lines, expected);
  assert.deepEqual(fs.readdirSync(metis), ["MEMORY.md"]);
});

test("a writer that finds the lock held waits for it, then writes", async (t) => {
  const { root, metis } = workspace(t);
  fs.mkdirSync(metis);
  fs.writeFileSync(path.join(metis, "MEMORY.md"), "- one\n");
  const lock = path.join(metis, ".MEMORY.md.lock");
  fs.writeFileSync(lock, "00000000000000aa\n"); // another writer's, taken just now
  let contended = false;
  const lines = await startWriter(root, "w", 1, "--signal", (line) => {
    if (line === "contended") {
      contended = true;
      fs.unlinkSync(lock); // the other writer releases it
    }
  });
  assert.ok(contended, "the writer never found the lock held");
  const result = JSON.parse(lines.at(-1));
  assert.ok(result.ok, `the waiting writer failed: ${result.message}`);
  assert.equal(result.before, sha256("- one\n"));
  assert.equal(fs.readFileSync(path.join(metis, "MEMORY.md"), "utf8"), "- one\nw-0\n");
  assert.deepEqual(fs.readdirSync(metis), ["MEMORY.md"]);
});

test("a lock left by a dead writer an hour ago is broken at once", async (t) => {
  const { root, metis } = workspace(t);
  fs.mkdirSync(metis);
  const lock = path.join(metis, ".MEMORY.md.lock");
  fs.writeFileSync(lock, "00000000000000bb\n");
  const anHourAgo = new Date(Date.now() - 3600_000);
  fs.utimesSync(lock, anHourAgo, anHourAgo);
  const started = process.hrtime.bigint();
  await openWorkspace(root).addEntry("MEMORY.md", "- after the dead writer");
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  assert.ok(seconds < 3, `breaking a lock an hour old took ${seconds} s`);
  assert.deepEqual(fs.readdirSync(metis), ["MEMORY.md"]);
});
