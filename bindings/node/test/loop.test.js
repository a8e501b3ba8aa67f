// The Promise API keeps the event loop turning: the first call (which loads, meters and
// compiles the component, the metering on a worker thread) and every later one let a
// callback scheduled alongside run before they resolve, and calls awaited one after
// another let the loop turn between them. Asserted by the order things happen in, never
// by time: scripts/bench-loop measures how long the loop waits.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";
import { openWorkspace } from "metis-memory";

const sha256 = (text) => createHash("sha256").update(text).digest("hex");

function root(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-loop-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Schedules an immediate just before (`before`) or just after starting `call()`; the
 * order in which they came. */
async function race(call, { before }) {
  const order = [];
  const immediate = () => setImmediate(() => order.push("immediate"));
  if (before) immediate();
  const done = call().then((value) => {
    order.push("call");
    return value;
  });
  if (!before) immediate();
  const value = await done;
  return { order, value };
}

test("the first call lets an immediate scheduled after it run before it resolves", async (t) => {
  // A memory limit no other call of this process has used, so that this call is the one
  // that loads, meters (on a worker thread) and compiles the component for it.
  const ws = openWorkspace(root(t), { limits: { memoryBytes: 40 << 20 } });
  const { order, value } = await race(() => ws.read("MEMORY.md"), { before: false });
  assert.equal(value, "");
  assert.deepEqual(order, ["immediate", "call"]);
});

test("a warm call runs after an immediate scheduled before it, not ahead of it", async (t) => {
  const ws = openWorkspace(root(t));
  await ws.addEntry("MEMORY.md", "- warm");
  const session = ws.session();
  await session.systemPrompt("");
  const calls = {
    read: () => ws.read("MEMORY.md"),
    add: () => ws.addEntry("MEMORY.md", "- two"),
    systemPrompt: () => session.systemPrompt(""),
    callTool: () => session.callTool("memory_add", { file: "USER.md", entry: "- x" }),
    memoryUpdate: () => session.memoryUpdate(),
  };
  for (const [name, call] of Object.entries(calls)) {
    assert.deepEqual((await race(call, { before: true })).order, ["immediate", "call"], name);
  }
  assert.equal(fs.readFileSync(path.join(ws.metisDir, "USER.md"), "utf8"), "- x\n");
});

test("calls awaited one after another let the loop turn between them", async (t) => {
  const ws = openWorkspace(root(t));
  await ws.read("MEMORY.md");
  let turns = 0;
  let done = false;
  const tick = () => {
    turns += 1;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  const seen = [];
  for (let i = 0; i < 10; i++) {
    await ws.addEntry("MEMORY.md", `- ${i}`);
    seen.push(turns);
  }
  done = true;
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `no turn between add ${i - 1} and add ${i}: ${seen}`);
});

test("a timer due during a run of awaited calls fires before the run ends", async (t) => {
  const ws = openWorkspace(root(t));
  await ws.read("MEMORY.md");
  let fired = false;
  setTimeout(() => {
    fired = true;
  }, 0);
  // The timers phase of the first loop turn after it is due (1 ms) runs it: each call
  // takes a turn of the loop before its work, so some add of the run comes after it.
  // Were the calls to resolve without a turn, it could not fire until the run ended.
  let firedBefore;
  for (let i = 0; i < 100 && firedBefore === undefined; i++) {
    await ws.addEntry("MEMORY.md", `- ${i}`);
    if (fired) firedBefore = i;
  }
  assert.ok(firedBefore !== undefined, "the timer did not fire while the calls ran");
});

test("a session's concurrent tool calls run in the order made, each held to the last", async (t) => {
  const dir = root(t);
  const ws = openWorkspace(dir);
  const session = ws.session();
  await session.systemPrompt("");
  const entries = Array.from({ length: 20 }, (_, i) => `- entry ${String(i).padStart(2, "0")}`);
  const outcomes = await Promise.all(
    entries.map((entry) => session.callTool("memory_add", { file: "MEMORY.md", entry })),
  );
  const text = fs.readFileSync(path.join(dir, ".metis", "MEMORY.md"), "utf8");
  assert.equal(text, entries.map((e) => `${e}\n`).join(""));
  const chain = outcomes.map((o) => [o.result.beforeHash, o.result.afterHash]);
  assert.equal(chain[0][0], sha256(""));
  assert.equal(chain.at(-1)[1], sha256(text));
  for (let i = 1; i < chain.length; i++) assert.equal(chain[i][0], chain[i - 1][1]);
  const seen = session.state.seen.find((v) => v.file === "MEMORY.md");
  assert.equal(seen.sha256, sha256(text));
});
