// Fuel and memory limits per call (meter.js: JavaScript engines have neither), as the
// Rust and Python hosts enforce them: running out is a TrapError, the next call works,
// and a trap at any point of a write leaves no lock or temporary file behind and the file
// whole: its old bytes, or its new ones if the trap came after the rename (`written`
// says which when the write held the lock).

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_LIMITS, HardCapExceededError, TrapError, openWorkspace } from "metis-memory";

function workspace(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-limits-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return { root, metis: path.join(root, ".metis") };
}

/** Every name in `dir` with its bytes. */
function snapshot(dir) {
  return Object.fromEntries(fs.readdirSync(dir).sort().map((n) => [n, fs.readFileSync(path.join(dir, n), "utf8")]));
}

test("limits default to DEFAULT_LIMITS and are checked when the workspace is opened", (t) => {
  const { root } = workspace(t);
  assert.deepEqual(openWorkspace(root).limits, DEFAULT_LIMITS);
  assert.deepEqual(openWorkspace(root, { limits: { fuel: 5 } }).limits, { ...DEFAULT_LIMITS, fuel: 5 });
  for (const limits of [{ fuel: 0 }, { fuel: -1 }, { memoryBytes: 1.5 }, { fuel: "many" }]) {
    assert.throws(() => openWorkspace(root, { limits }), TypeError, JSON.stringify(limits));
  }
});

test("running out of fuel before writing is a TrapError that changes nothing; the next call works", async (t) => {
  const { root, metis } = workspace(t);
  await openWorkspace(root).addEntry("MEMORY.md", "fact");
  const before = snapshot(metis);
  const starved = openWorkspace(root, { limits: { fuel: 50 } });
  await assert.rejects(starved.addEntry("MEMORY.md", "more"), (e) => e instanceof TrapError && /ran out of fuel/.test(e.message));
  assert.deepEqual(snapshot(metis), before);
  assert.equal((await openWorkspace(root).addEntry("MEMORY.md", "more")).beforeSizeBytes, 5);
});

test("the default fuel is ample: a tool call that fills the file to its hard cap needs under 1%", async (t) => {
  const { root } = workspace(t);
  const hardCap = await openWorkspace(root).hardCap("MEMORY.md");
  const line = "- the deploy script lives in scripts/deploy and needs the staging key\n";
  const content = line.repeat(Math.floor(hardCap / line.length));
  const lean = openWorkspace(root, { limits: { fuel: DEFAULT_LIMITS.fuel / 100 } });
  const done = await lean.callTool("memory_consolidate", { file: "MEMORY.md", content });
  assert.equal(done.result.afterSizeBytes, content.length);
});

test("an argument beyond the memory limit is a TrapError, where the default limit gets the store's refusal", async (t) => {
  const { root, metis } = workspace(t);
  const huge = "x".repeat(8 << 20);
  await assert.rejects(openWorkspace(root).consolidate("MEMORY.md", huge), HardCapExceededError);
  const small = openWorkspace(root, { limits: { memoryBytes: 4 << 20 } });
  await assert.rejects(small.consolidate("MEMORY.md", huge), TrapError);
  assert.ok(!fs.existsSync(metis), "a refused first write leaves no .metis/");
  assert.equal((await small.addEntry("MEMORY.md", "fact")).afterSizeBytes, 5);
});

async function addWithFuel(root, fuel) {
  try {
    await openWorkspace(root, { limits: { fuel } }).addEntry("MEMORY.md", "probe");
    return true;
  } catch (e) {
    if (!(e instanceof TrapError)) throw e;
    return false;
  } finally {
    await openWorkspace(root).consolidate("MEMORY.md", "fact\n");
  }
}

test("a trap at any point of a write leaves no lock or temporary file, and the file old or new, whole", async (t) => {
  const { root, metis } = workspace(t);
  await openWorkspace(root).consolidate("MEMORY.md", "fact\n");
  let [low, high] = [0, 1_000_000]; // the least fuel an add needs, by bisection
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    [low, high] = (await addWithFuel(root, middle)) ? [low, middle] : [middle, high];
  }
  let [notWritten, written] = [0, 0];
  for (let fuel = Math.floor(high / 2); fuel < high; fuel += Math.max(1, Math.floor(high / 80))) {
    const trapped = await openWorkspace(root, { limits: { fuel } }).addEntry("MEMORY.md", "more").catch((e) => e);
    assert.ok(trapped instanceof TrapError, `fuel ${fuel}: ${trapped}`);
    const left = snapshot(metis);
    assert.deepEqual(Object.keys(left), ["MEMORY.md"], `fuel ${fuel}`);
    // Whole or not at all: a trap after the rename leaves the write in place, complete,
    // and the trap says which when the write left a trace (it held the lock).
    assert.ok(["fact\n", "fact\nmore\n"].includes(left["MEMORY.md"]), `fuel ${fuel}`);
    if (trapped.written !== null) {
      assert.equal(trapped.written, left["MEMORY.md"] === "fact\nmore\n", `fuel ${fuel}`);
      if (trapped.written) written += 1;
      else notWritten += 1;
    }
    await openWorkspace(root).consolidate("MEMORY.md", "fact\n");
  }
  // The sweep reaches the moments the clean-up is for: traps holding the lock before the
  // rename (nothing written) and after it (written, not yet released).
  t.diagnostic(`an add needs ${high} units; traps holding the lock: ${notWritten} before the rename, ${written} after`);
  assert.ok(notWritten > 0 && written > 0, `not written ${notWritten}, written ${written}`);
});

test("a memory limit past wasm32's 4 GiB is no limit; one below the initial memory is a clear error", async (t) => {
  const { root } = workspace(t);
  const vast = openWorkspace(root, { limits: { memoryBytes: 2 ** 45 } });
  assert.equal((await vast.addEntry("MEMORY.md", "fact")).afterSizeBytes, 5);
  const tiny = openWorkspace(root, { limits: { memoryBytes: 65536 } });
  await assert.rejects(
    tiny.read("MEMORY.md"),
    (e) => e instanceof TrapError && /below the module's initial memory/.test(e.message),
  );
  assert.equal(await openWorkspace(root).read("MEMORY.md"), "fact\n");
});

test("a core module whose section runs past its end is refused, not read beyond it", async () => {
  const meter = await import(new URL("./meter.js", import.meta.resolve("metis-memory")));
  const header = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  // A code section (10) declaring 32 bytes, with one present.
  const truncated = Uint8Array.of(...header, 10, 32, 0x01);
  assert.throws(() => meter.meterCoreModule(truncated, 1 << 20), /runs past the module's end/);
});

test("a function whose body runs past the code section is refused", async () => {
  const meter = await import(new URL("./meter.js", import.meta.resolve("metis-memory")));
  const header = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  // A code section (10) of 3 bytes: one function declaring a 9-byte body.
  const truncated = Uint8Array.of(...header, 10, 3, 0x01, 0x09, 0x00);
  assert.throws(() => meter.meterCoreModule(truncated, 1 << 20), /runs past the code section's end/);
});

test("a write past a file-size limit is a file-too-large store error, not a trap, and changes nothing", async (t) => {
  const { root, metis } = workspace(t);
  await openWorkspace(root).addEntry("MEMORY.md", "fact");
  const before = snapshot(metis);
  // The limit applies to a child process of its own (`ulimit -f 0`), whose SIGXFSZ is
  // ignored as Node ignores it; the child imports the installed package as this file does.
  const script = [
    'import { openWorkspace } from "metis-memory";',
    `const e = await openWorkspace(${JSON.stringify(root)}).addEntry("MEMORY.md", "more").catch((e) => e);`,
    "console.log(JSON.stringify({ name: e?.constructor?.name, kind: e?.kind, message: e?.message }));",
  ].join("\n");
  const { execFileSync } = await import("node:child_process");
  const out = execFileSync("sh", ["-c", 'ulimit -f 0; exec "$0" --input-type=module -e "$1"', process.execPath, script], {
    cwd: path.dirname(fileURLToPath(import.meta.url)),
    encoding: "utf8",
  });
  const error = JSON.parse(out);
  assert.equal(error.name, "FileTooLargeError", out);
  assert.equal(error.kind, "file-too-large", out);
  assert.match(error.message, /file too large \(file-too-large\)/, out);
  assert.deepEqual(snapshot(metis), before);
});
