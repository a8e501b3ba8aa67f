// What the package's WASI filesystem does with each call the guest makes: recorded by
// wrapping the filesystem's resource methods around real writes (the full trace is
// printed as test diagnostics; on Linux the calls are pinned-filesystem.js's, elsewhere
// preview2-shim's own), and the shim's answers about a directory it pre-opens by path
// checked directly.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { WASIShim } from "@bytecodealliance/preview2-shim/instantiation";
import { openWorkspace } from "metis-memory";
import { traced, show, withHook } from "./shim-hooks.js";

function workspace(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-wasi-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return { root, metis: path.join(root, ".metis"), ws: openWorkspace(root) };
}

const find = (calls, name, pred = () => true) => calls.filter((c) => c.name === name && pred(c));

test("a write's WASI calls: lock by link, exclusive create, rename, syncs", async (t) => {
  const { metis, ws } = workspace(t);
  fs.mkdirSync(metis);
  fs.writeFileSync(path.join(metis, "MEMORY.md"), "- one\n");
  const { calls } = await traced(() => ws.addEntry("MEMORY.md", "- two"));
  t.diagnostic(`add-entry on an existing file:\n${show(calls)}`);

  // Take: the pending lock is created exclusively, then hard-linked to the lock name.
  const pending = find(calls, "openAt", (c) => /^"\.MEMORY\.md\.lock\.[0-9a-f]{16}"$/.test(c.args[1]));
  assert.ok(pending.length >= 1 && pending[0].args[2] === "{create,exclusive}" && !pending[0].error, show(pending));
  const linked = find(calls, "linkAt", (c) => c.args[3] === '".MEMORY.md.lock"');
  assert.ok(linked.length >= 1 && !linked[0].error, show(linked));
  // stat-at never follows links and answers for present and missing names alike.
  assert.ok(find(calls, "statAt").every((c) => c.args[0] === "{}" && (!c.error || c.error === "no-entry")));
  // Commit: the temporary file is created exclusively, written, synced, renamed over.
  const temp = find(calls, "openAt", (c) => /\.tmp"$/.test(c.args[1]));
  assert.equal(temp[0].args[2], "{create,exclusive}");
  assert.ok(!temp[0].error);
  const rename = calls.findIndex((c) => c.name === "renameAt" && /\.tmp"$/.test(c.args[0]));
  assert.ok(rename > 0 && !calls[rename].error, show(calls));
  const before = calls.slice(0, rename);
  assert.ok(find(before, "sync").length >= 1 && find(before, "sync").every((c) => !c.error), "temporary file sync");
  // After the rename the directory is synced, which makes the rename durable: the shim
  // refuses `sync` on the preopen itself (below), so the guest must sync a descriptor
  // of "." opened under it.
  const after = calls.slice(rename + 1);
  const dirSyncs = find(after, "sync");
  assert.ok(dirSyncs.some((c) => !c.error), `no directory sync succeeded after the rename:\n${show(after)}`);
  // Release: the lock is moved aside and removed; nothing is left.
  assert.ok(find(after, "renameAt", (c) => /\.aside"$/.test(c.args[2])).every((c) => !c.error));
  assert.deepEqual(fs.readdirSync(metis), ["MEMORY.md"]);
});

test("preview2-shim refuses sync and listing on the preopen itself, not on '.' opened under it", (t) => {
  const { metis } = workspace(t);
  fs.mkdirSync(metis);
  fs.writeFileSync(path.join(metis, "MEMORY.md"), "x\n");
  const shim = new WASIShim({ sandbox: { preopens: { ".metis": metis }, env: {}, enableNetwork: false } });
  const imports = shim.getImportObject();
  const directories = imports["wasi:filesystem/preopens"].getDirectories();
  assert.deepEqual(directories.map(([, name]) => name), [".metis"]);
  const [preopen] = directories[0];
  const refused = (f) => {
    try {
      f();
      return "ok";
    } catch (e) {
      return e;
    }
  };
  const here = preopen.openAt({}, ".", { directory: true }, { read: true });
  const listed = [];
  const stream = here.readDirectory();
  for (let e = stream.readDirectoryEntry(); e; e = stream.readDirectoryEntry()) listed.push(e.name);
  const answers = {
    "preopen.sync": refused(() => preopen.sync()),
    "preopen.stat": refused(() => preopen.stat()),
    "preopen.readDirectory": refused(() => preopen.readDirectory()),
    "'.'.sync": refused(() => here.sync()),
    "'.'.stat": refused(() => here.stat().type),
  };
  t.diagnostic(JSON.stringify(answers));
  assert.deepEqual(answers, {
    "preopen.sync": "invalid",
    "preopen.stat": "invalid",
    "preopen.readDirectory": "bad-descriptor",
    "'.'.sync": "ok",
    "'.'.stat": "ok",
  });
  assert.deepEqual(listed, ["MEMORY.md"]);
  // Nothing outside the preopen is reachable by path.
  assert.equal(refused(() => preopen.statAt({}, "../")), "not-permitted");
  // The sandbox has no network and only the environment given.
  assert.deepEqual(imports["wasi:cli/environment"].getEnvironment(), []);
});

test(
  // The guest lists a "." opened under the preopen, since the shim refuses to list the
  // preopen itself.
  "a temporary file left by a crashed writer is removed by the next write",
  async (t) => {
    const { metis, ws } = workspace(t);
    fs.mkdirSync(metis);
    fs.writeFileSync(path.join(metis, ".MEMORY.md.00000000000000aa.tmp"), "half a write");
    await ws.addEntry("MEMORY.md", "- one");
    assert.deepEqual(fs.readdirSync(metis), ["MEMORY.md"]);
  },
);

test("what the kernel saw (strace): the temporary file synced, renamed, then .metis/ synced", (t) => {
  const { root } = workspace(t);
  const log = path.join(root, "strace.log");
  const script = `import { openWorkspace } from "metis-memory"; await openWorkspace(process.argv[1]).addEntry("MEMORY.md", "fact");`;
  const work = path.join(root, "ws");
  fs.mkdirSync(path.join(work, ".metis"), { recursive: true });
  // Over a file that exists: a rename (where there is none, a link).
  fs.writeFileSync(path.join(work, ".metis", "MEMORY.md"), "- old\n");
  const run = spawnSync(
    "strace",
    ["-f", "-y", "-o", log, "-e", "trace=fsync,fdatasync,rename,renameat,renameat2",
     process.execPath, "--input-type=module", "-e", script, work],
    { encoding: "utf8" },
  );
  assert.equal(run.status, 0, run.stderr);
  const calls = fs.readFileSync(log, "utf8").split("\n").filter((l) => l.includes("("));
  const renamed = calls.flatMap((l, i) => (/rename.*[/"]MEMORY\.md"\)/.test(l) ? [i] : []));
  assert.equal(renamed.length, 1, calls.join("\n"));
  const [before, after] = [calls.slice(0, renamed[0]), calls.slice(renamed[0] + 1)];
  assert.ok(before.some((l) => /sync\(/.test(l) && l.includes(".tmp>")), calls.join("\n"));
  const dir = path.join(work, ".metis");
  assert.ok(after.some((l) => /sync\(/.test(l) && l.includes(`<${dir}>)`)), calls.join("\n"));
});

test(
  // Another writer's refused first write created `.metis/` and removes it while it is
  // still empty, after this write found it and before its guest wrote there: the write
  // runs again in a `.metis/` of its own instead of failing.
  "a write whose .metis/ vanished under it runs again and lands",
  async (t) => {
    const { metis, ws } = workspace(t);
    fs.mkdirSync(metis);
    let removed = 0;
    await withHook(
      (name, args, call) => {
        if (removed === 0) {
          removed++;
          fs.rmdirSync(metis);
        }
        return call();
      },
      () => ws.addEntry("MEMORY.md", "- kept"),
    );
    assert.equal(removed, 1, "the guest made no filesystem call");
    assert.equal(fs.readFileSync(path.join(metis, "MEMORY.md"), "utf8"), "- kept\n");
    assert.deepEqual(fs.readdirSync(metis), ["MEMORY.md"]);
  },
);
