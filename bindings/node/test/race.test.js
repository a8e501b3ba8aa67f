// `.metis` swapped for a symbolic link while calls run. The package
// checks that `.metis` is a directory and not a link, then pre-opens it; preview2-shim
// resolves a pre-open's path again on every call, so a process exchanging the two in a
// loop had reads return another directory's USER.md and writes leave lock files there.
// The package now opens `.metis` once, without following a link, and pre-opens exactly
// the directory it opened (preopen.js, pinned-filesystem.js): no call may ever see the
// other side, however the race falls.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { spawn, spawnSync } from "node:child_process";
import { WorkspaceError, openWorkspace } from "metis-memory";
import { withHook } from "./shim-hooks.js";

const racer = new URL("./racer.js", import.meta.url).pathname;
const OURS = "- ours: this workspace's user\n";
const THEIRS = "- theirs: another directory's user\n";
const LINUX_ONLY = process.platform !== "linux" && "the race is only closed where /proc/self/fd reaches an open directory";
const READS = 10_000;
const WRITE_EVERY = 100;

/** Starts racer.js on `root`; resolves once it has swapped, with a `stop()` that ends it
 * and resolves to its counts. Should the test fail first, the racer is killed, and gone,
 * before `root` is removed. */
async function startRacer(t, root) {
  const child = spawn(process.execPath, [racer, root], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  t.after(async () => {
    child.kill();
    await exited;
    fs.rmSync(root, { recursive: true, force: true });
  });
  const first = await lines.next();
  assert.equal(first.value, "ready", "the racer did not start");
  return {
    async stop() {
      fs.writeFileSync(path.join(root, "stop"), "");
      const last = await lines.next();
      const { code, signal } = await exited;
      assert.equal(code, 0, `the racer exited ${code ?? signal}`);
      return JSON.parse(last.value);
    },
  };
}

/** Every file under `dir`, with its content. */
function snapshot(dir) {
  return Object.fromEntries(
    fs.readdirSync(dir, { recursive: true }).sort().map((name) => {
      const file = path.join(dir, name);
      return [name, fs.statSync(file).isFile() ? fs.readFileSync(file, "utf8") : "<dir>"];
    }),
  );
}

test(
  ".metis swapped for a link in a loop: no read returns the other directory's USER.md, no write leaves a file there",
  { skip: LINUX_ONLY },
  async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-race-"));
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-race-other-"));
    t.after(() => fs.rmSync(other, { recursive: true, force: true }));
    const metis = path.join(root, ".metis");
    fs.mkdirSync(metis);
    fs.writeFileSync(path.join(metis, "USER.md"), OURS);
    fs.writeFileSync(path.join(other, "USER.md"), THEIRS);
    fs.symlinkSync(other, path.join(root, ".metis-link"));
    const before = snapshot(other);

    const ws = openWorkspace(root);
    const counts = { reads: 0, ours: 0, empty: 0, leaked: 0, other: 0, refused: 0, failed: 0, writes: 0, written: 0, writesRefused: 0 };
    const unexpected = new Set();
    const race = await startRacer(t, root);
    for (let i = 0; i < READS; i++) {
      if (i % WRITE_EVERY === 0) {
        counts.writes++;
        try {
          await ws.addEntry("MEMORY.md", `- entry ${i}`);
          counts.written++;
        } catch (e) {
          if (e instanceof WorkspaceError) counts.writesRefused++;
          else unexpected.add(`write: ${e.name}: ${e.message}`);
        }
        continue;
      }
      counts.reads++;
      // A fresh workspace now and then, as a one-shot process makes its instance.
      const reader = i % 10 === 1 ? openWorkspace(root) : ws;
      let text;
      try {
        text = await reader.read("USER.md");
      } catch (e) {
        // `.metis` was the link when it was checked.
        if (e instanceof WorkspaceError) counts.refused++;
        else {
          counts.failed++;
          unexpected.add(`read: ${e.name}: ${e.message}`);
        }
        continue;
      }
      if (text === OURS) counts.ours++;
      else if (text.includes("theirs")) counts.leaked++;
      // `.metis` was parked aside (no memory), or a directory a write made meanwhile.
      else if (text === "") counts.empty++;
      else {
        counts.other++;
        unexpected.add(`read: ${JSON.stringify(text)}`);
      }
    }
    const raced = await race.stop();
    const after = snapshot(other);
    const stray = Object.keys(after).filter((name) => after[name] !== before[name]);
    t.diagnostic(JSON.stringify({ ...counts, ...raced, stray: stray.length }));
    if (unexpected.size) t.diagnostic(`other outcomes:\n${[...unexpected].join("\n")}`);

    assert.ok(raced.swaps > 100, `the racer swapped only ${raced.swaps} times`);
    assert.ok(counts.ours > 0, "no read saw this workspace's USER.md");
    assert.equal(counts.leaked, 0, `${counts.leaked} of ${counts.reads} reads returned the other directory's USER.md`);
    assert.deepEqual(after, before, `writes left or changed ${stray.length} files in the other directory: ${stray.join(", ")}`);
    // Every read returned this workspace's USER.md, none, or a refusal of the link.
    assert.equal(counts.other + counts.failed, 0, [...unexpected].join("\n"));
    // The real directory holds what it held, and whatever the writes added to it.
    assert.equal(fs.readFileSync(path.join(metis, "USER.md"), "utf8"), OURS);
  },
);

test(
  ".metis swapped for a link once a call has begun: the read and the write reach the directory checked, not the link",
  { skip: LINUX_ONLY },
  async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-race-"));
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const metis = path.join(root, ".metis");
    const aside = path.join(root, "checked");
    const other = path.join(root, "other");
    fs.mkdirSync(metis);
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(metis, "USER.md"), OURS);
    fs.writeFileSync(path.join(other, "USER.md"), THEIRS);
    const before = snapshot(other);
    // At the guest's first filesystem call, after every check the package makes, the
    // checked directory is moved aside and a link to the other put in its place.
    let swapped = 0;
    const swapAtFirstCall = (name, args, call) => {
      if (swapped++ === 0) {
        fs.renameSync(metis, aside);
        fs.symlinkSync(other, metis);
      }
      return call();
    };
    const ws = openWorkspace(root);
    assert.equal(await withHook(swapAtFirstCall, () => ws.read("USER.md")), OURS);
    assert.ok(swapped > 0, "the guest made no filesystem call");
    fs.unlinkSync(metis);
    fs.renameSync(aside, metis);
    swapped = 0;
    await withHook(swapAtFirstCall, () => ws.addEntry("USER.md", "- written"));
    assert.ok(swapped > 0, "the guest made no filesystem call");
    assert.deepEqual(snapshot(other), before, "the write reached the other directory");
    assert.equal(fs.readFileSync(path.join(aside, "USER.md"), "utf8"), `${OURS}- written\n`);
    assert.deepEqual(fs.readdirSync(aside), ["USER.md"]);
  },
);

// Run in a process with /proc unmounted (a private mount namespace): what the package does
// where no path reaches an open directory.
const WITHOUT_PROC = `
import fs from "node:fs";
import path from "node:path";
const { openWorkspace } = await import(${JSON.stringify(import.meta.resolve("metis-memory"))});
const { withHook } = await import(${JSON.stringify(new URL("./shim-hooks.js", import.meta.url).href)});
const [root, open] = process.argv.slice(1);
let shimCalls = 0;
// preview2-shim's own openAt, on the package's worker thread (shim-hooks.js).
const { read, readOnly } = await withHook(
  function (name, args, call) {
    if (name === "openAt" && this.of === "shim") shimCalls++;
    return call();
  },
  async () => {
    const ws = openWorkspace(root);
    await ws.addEntry("USER.md", "- written without /proc");
    const read = await ws.read("USER.md");
    const readOnly = await openWorkspace(root, { readOnly: true }).read("USER.md");
    return { read, readOnly };
  },
);
fs.chmodSync(open, 0o777);
const refused = await openWorkspace(open).addEntry("USER.md", "- x").catch((e) => e.message);
console.log(JSON.stringify({ proc: fs.existsSync("/proc/self"), read, readOnly, refused, shimCalls, created: fs.readdirSync(open) }));
`;

test(
  "without /proc, .metis is pre-opened by path (the window remains, and a warning says so), and every call works, the checks included",
  { skip: LINUX_ONLY },
  (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-noproc-"));
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const open = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-noproc-open-"));
    t.after(() => fs.rmSync(open, { recursive: true, force: true }));
    const script = 'umount -l /proc || exit 77; exec "$@"';
    const run = spawnSync(
      "unshare",
      ["--mount", "--propagation", "private", "sh", "-c", script, "sh", process.execPath, "--input-type=module", "-e", WITHOUT_PROC, root, open],
      { encoding: "utf8", cwd: path.dirname(new URL(import.meta.url).pathname) },
    );
    if (run.error || run.status === 77 || /unshare: /.test(run.stderr)) {
      return t.skip(`this machine cannot unmount /proc in a private mount namespace: ${run.error?.message ?? run.stderr.trim()}`);
    }
    assert.equal(run.status, 0, run.stderr);
    const outcome = JSON.parse(run.stdout);
    assert.equal(outcome.proc, false);
    assert.equal(outcome.read, "- written without /proc\n");
    assert.equal(outcome.readOnly, "- written without /proc\n");
    assert.ok(outcome.shimCalls > 0, "the calls did not go through the shim's pre-open by path");
    assert.match(outcome.refused, /can be written by every user and has no sticky bit/);
    assert.deepEqual(outcome.created, []);
    // Said once, as a process warning.
    assert.equal(run.stderr.split("METIS_MEMORY_PREOPEN_BY_PATH").length - 1, 1, run.stderr);
  },
);
