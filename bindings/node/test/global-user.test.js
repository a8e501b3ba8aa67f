// Global user memory (`globalUser`) and the prompt budget (`promptBudget`), as the Rust
// host has them (host/src/global_user.rs, workspace.rs): the user's own `.metis/` is
// pre-opened beside the workspace's at guest path `global-metis` and the settings reach the
// instance as the `store.settings` of its `store.workspace` (never as its environment), the
// component deciding the rest; the directory is created
// (0700) by a write and never by a read, removed again when that write fails, refused when
// another user owns it whatever trustForeignMetis says, and checked, like `.metis/`, before every
// read on the kept instance, which is only used on the directory it was made for. Every
// home here is a temporary directory, never the real one.

import { test } from "node:test";
import { instancesMade } from "./instances-made.js";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import {
  EmptyEntryError,
  InvalidUtf8Error,
  IoError,
  ReadOnlyError,
  ToolError,
  TrapError,
  WorkspaceError,
  openWorkspace,
} from "metis-memory";

const G = "~/.metis/USER.md";
const FOREIGN_UID = 4242;
const posix = process.platform !== "win32";
// What a refusal of the user's own `.metis/` says to do: no opt-in reaches it.
const OWN_MEMORY_HINT =
  "(it is your own memory, which { trustForeignMetis: true } does not reach: make it yours and private (chown, chmod 700), or give globalUser another dir)";

function tempDir(t, prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A workspace root and a home of their own; `global` is the home's `.metis/`. */
function setup(t) {
  const root = tempDir(t, "metis-node-global-ws-");
  const home = tempDir(t, "metis-node-global-home-");
  return { root, home, metis: path.join(root, ".metis"), global: path.join(home, ".metis") };
}

/** `dir` holding `files`, made as a person would (mode 0755). */
function given(dir, files) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
}

/** Every entry under `dir` with its content, mode and owner; {} when it is missing. */
function snapshot(dir) {
  if (!fs.existsSync(dir)) return {};
  const entries = {};
  for (const name of ["", ...fs.readdirSync(dir, { recursive: true }).sort()]) {
    const file = path.join(dir, name);
    const s = fs.lstatSync(file);
    entries[name || "."] = { mode: s.mode, uid: s.uid, content: s.isFile() ? fs.readFileSync(file, "utf8") : null };
  }
  return entries;
}

const mode = (dir) => fs.statSync(dir).mode & 0o7777;


test("the user's own USER.md round-trips through every store call, in its own directory", async (t) => {
  const { root, metis, global } = setup(t);
  const ws = openWorkspace(root, { globalUser: { dir: global } });
  assert.deepEqual(ws.globalUser, { dir: global, agentWrites: false });
  assert.deepEqual(ws.memoryFiles(), ["MEMORY.md", "USER.md", G]);
  assert.equal(ws.filePath(G), path.join(global, "USER.md"));
  assert.equal(ws.filePath("USER.md"), path.join(metis, "USER.md"));

  const added = await ws.addEntry(G, "- name: Sam");
  assert.equal(added.file, G);
  assert.equal(added.afterSizeBytes, 12);
  assert.equal(fs.readFileSync(path.join(global, "USER.md"), "utf8"), "- name: Sam\n");
  assert.ok(!fs.existsSync(path.join(metis, "USER.md")), "the workspace's USER.md was not written");
  assert.equal(await ws.read(G), "- name: Sam\n");
  assert.equal(await ws.read("USER.md"), "");
  assert.equal(await ws.exists(G), true);
  assert.equal(await ws.sizeBytes(G), 12);
  assert.equal(await ws.softCap(G), 1536);
  assert.equal(await ws.hardCap(G), 3072);
  await ws.replace(G, "Sam", "Samantha");
  await ws.addEntry("USER.md", "- prefers tabs here");
  assert.equal(await ws.read(G), "- name: Samantha\n");
  assert.deepEqual(await ws.audit(G), []);

  const composed = await ws.composeSystemPrompt("", "omit");
  assert.deepEqual(composed.sources.map((s) => s.file), [G, "USER.md", "MEMORY.md"]);
  assert.match(
    composed.text,
    /## User context, every workspace \(~\/\.metis\/USER\.md\)\n- name: Samantha\n\n## User context \(USER\.md\)\n- prefers tabs here/,
  );
  // The file name is taken wherever a file is: a consolidate held to the versions shown.
  const [version, workspaceVersion] = composed.sources.map((s) => s.sha256);
  const done = await ws.callTool("memory_consolidate", { file: "USER.md", content: "- tabs\n" }, { seen: { "USER.md": workspaceVersion, [G]: version } });
  assert.equal(done.result.file, "USER.md");
  await ws.consolidateIfUnchanged(G, "- Sam\n", version);
  assert.equal(fs.readFileSync(path.join(global, "USER.md"), "utf8"), "- Sam\n");
});

test("with global user memory off, the user's own file reads empty, a write to it is refused, and nothing is pre-opened", async (t) => {
  const { root, metis, global } = setup(t);
  given(global, { "USER.md": "- name: Sam\n" });
  const ws = openWorkspace(root);
  assert.equal(ws.globalUser, undefined);
  assert.deepEqual(ws.memoryFiles(), ["MEMORY.md", "USER.md"]);
  assert.equal(ws.filePath(G), undefined);
  assert.equal(await ws.read(G), "");
  await assert.rejects(ws.addEntry(G, "- x"), IoError);
  assert.ok(!fs.existsSync(metis), "the refused first write left no .metis/");
  given(metis, { "USER.md": "- tabs\n" });
  assert.doesNotMatch(await ws.assembleSystemPrompt(""), /every workspace|name: Sam/);
});

test("the agent's USER.md is the user's own with agentWrites, the workspace's without", async (t) => {
  const { root, metis, global } = setup(t);
  given(metis, { "USER.md": "- tabs here\n" });
  given(global, { "USER.md": "- name: Sam\n" });
  const writes = openWorkspace(root, { globalUser: { dir: global, agentWrites: true } });
  const success = await writes.callTool("memory_add", { file: "USER.md", entry: "- likes tea" });
  assert.equal(success.result.file, G);
  assert.equal(success.events[0].payload.file, G);
  assert.match(success.text, /~\/\.metis\/USER\.md/);
  assert.equal(fs.readFileSync(path.join(global, "USER.md"), "utf8"), "- name: Sam\n- likes tea\n");
  const reads = openWorkspace(root, { globalUser: { dir: global } });
  const session = reads.session();
  assert.match((await session.systemPrompt("")).text, /every workspace \(~\/\.metis\/USER\.md\)\n- name: Sam\n- likes tea/);
  assert.equal((await session.callTool("memory_add", { file: "USER.md", entry: "- on call" })).result.file, "USER.md");
  assert.equal(fs.readFileSync(path.join(metis, "USER.md"), "utf8"), "- tabs here\n- on call\n");
  assert.equal(fs.readFileSync(path.join(global, "USER.md"), "utf8"), "- name: Sam\n- likes tea\n");
  assert.ok(session.state.seen.some((v) => v.file === G), JSON.stringify(session.state));
});

test("the user's own .metis/ is created 0700 (its parents too) by the first write, never by a read", async (t) => {
  const { root, home } = setup(t);
  const global = path.join(home, "nested", "deeper", ".metis");
  const ws = openWorkspace(root, { globalUser: { dir: global, agentWrites: true } });
  assert.equal(await ws.read(G), "");
  assert.equal(await ws.exists(G), false);
  await ws.composeSystemPrompt("", "omit");
  await ws.session().systemPrompt("");
  assert.deepEqual(fs.readdirSync(home), [], "reads created nothing");
  await ws.addEntry(G, "- name: Sam");
  assert.equal(mode(global), 0o700);
  assert.equal(mode(path.join(home, "nested")), 0o700);
  assert.equal(mode(path.join(home, "nested", "deeper")), 0o700);
  assert.deepEqual(fs.readdirSync(global), ["USER.md"]);
  assert.equal(await ws.read(G), "- name: Sam\n");
});

test("a failed write removes the user's own .metis/ it created, and only that", async (t) => {
  const { root, metis, global } = setup(t);
  const ws = openWorkspace(root, { globalUser: { dir: global } });
  await assert.rejects(ws.addEntry(G, "   "), EmptyEntryError);
  assert.ok(!fs.existsSync(global), "the created directory was removed");
  assert.ok(!fs.existsSync(metis));
  // One that was there before the failed write stays.
  fs.mkdirSync(global, { mode: 0o700 });
  await assert.rejects(ws.addEntry(G, "   "), EmptyEntryError);
  assert.ok(fs.existsSync(global));
  assert.equal(await ws.read(G), "");
});

test("a read-only workspace refuses writes to the user's own USER.md, and creates nothing", async (t) => {
  const { root, home, global } = setup(t);
  const ws = openWorkspace(root, { readOnly: true, globalUser: { dir: global, agentWrites: true } });
  // Not even for the moment of the call (a failed write removes what it created).
  const made = [];
  const watcher = fs.watch(home, (event, name) => made.push(`${event} ${name}`));
  t.after(() => watcher.close());
  await assert.rejects(ws.addEntry(G, "- x"), ReadOnlyError);
  await assert.rejects(ws.callTool("memory_add", { file: "USER.md", entry: "- from the model" }), ToolError);
  await new Promise((resolve) => setTimeout(resolve, 100));
  watcher.close();
  assert.deepEqual(made, [], "nothing was created in the home");
  assert.ok(!fs.existsSync(global), "no directory was created");
  given(global, { "USER.md": "- mine\n" });
  const before = snapshot(global);
  await assert.rejects(ws.addEntry(G, "- x"), (e) => e instanceof ReadOnlyError && e.file === G);
  await assert.rejects(ws.consolidate(G, "- replaced\n"), ReadOnlyError);
  await assert.rejects(ws.callTool("memory_add", { file: "USER.md", entry: "- from the model" }), ToolError);
  await assert.rejects(ws.session().callTool("memory_add", { file: "USER.md", entry: "- from the model" }), ToolError);
  assert.deepEqual(snapshot(global), before);
  assert.equal(await ws.read(G), "- mine\n");
});

/** `global` holding another user's USER.md, owned by FOREIGN_UID; false if this process
 * cannot chown (not root). */
function foreignGlobal(global) {
  given(global, { "USER.md": "- planted by another user\n" });
  try {
    fs.chownSync(path.join(global, "USER.md"), FOREIGN_UID, FOREIGN_UID);
    fs.chownSync(global, FOREIGN_UID, FOREIGN_UID);
  } catch (e) {
    if (e.code === "EPERM") return false;
    throw e;
  }
  return true;
}

function foreignMessage(global) {
  return `${global} belongs to uid ${FOREIGN_UID}, not to this user (uid ${process.geteuid()}): another user could put entries into this agent's prompt and read what it adds, so it is not used ${OWN_MEMORY_HINT}`;
}

test(
  "a user's own .metis/ another uid owns is neither read nor written, even with trustForeignMetis",
  { skip: !posix && "no uids on Windows" },
  async (t) => {
    const { root, metis, global } = setup(t);
    if (!foreignGlobal(global)) return t.skip("not root: this process cannot chown a directory to another user");
    given(metis, { "MEMORY.md": "- builds with cargo\n" });
    const before = { root: snapshot(root), global: snapshot(global) };
    const ws = openWorkspace(root, { globalUser: { dir: global, agentWrites: true } });
    const calls = {
      read: () => ws.read(G),
      readMemory: () => ws.read("MEMORY.md"),
      prompt: () => ws.composeSystemPrompt("", "omit"),
      sessionPrompt: () => ws.session().systemPrompt(""),
      addEntry: () => ws.addEntry(G, "- mine"),
      addMemory: () => ws.addEntry("MEMORY.md", "- mine"),
      callTool: () => ws.callTool("memory_add", { file: "USER.md", entry: "- from the model" }),
    };
    for (const [name, call] of Object.entries(calls)) {
      const error = await call().then((v) => assert.fail(`${name} was not refused: ${JSON.stringify(v)}`), (e) => e);
      assert.ok(error instanceof WorkspaceError, `${name}: ${error}`);
      assert.equal(error.message, foreignMessage(global), name);
    }
    assert.deepEqual({ root: snapshot(root), global: snapshot(global) }, before, "a refused call changed something");
    const trusted = openWorkspace(root, { globalUser: { dir: global }, trustForeignMetis: true });
    await assert.rejects(trusted.read(G), { message: foreignMessage(global) });
    await assert.rejects(trusted.assembleSystemPrompt(""), { message: foreignMessage(global) });
  },
);

test(
  "the user's own .metis/ given to another uid after a read: the next read, on the kept instance, is refused",
  { skip: !posix && "no uids on Windows" },
  async (t) => {
    const { root, global } = setup(t);
    given(global, { "USER.md": "- mine\n" });
    const ws = openWorkspace(root, { globalUser: { dir: global } });
    assert.equal(await ws.read(G), "- mine\n");
    try {
      fs.chownSync(global, FOREIGN_UID, FOREIGN_UID);
    } catch (e) {
      if (e.code === "EPERM") return t.skip("not root: this process cannot chown a directory to another user");
      throw e;
    }
    const refused = await ws.read(G).catch((e) => e);
    assert.ok(refused instanceof WorkspaceError, String(refused));
    assert.equal(refused.message, foreignMessage(global));
  },
);

test(
  "a user's own .metis/ every user can write is refused; one behind a link is followed",
  { skip: !posix && "no mode bits on Windows" },
  async (t) => {
    const { root, home, global } = setup(t);
    given(global, { "USER.md": "- mine\n" });
    fs.chmodSync(global, 0o777);
    const refused = await openWorkspace(root, { globalUser: { dir: global } }).read(G).catch((e) => e);
    assert.ok(refused instanceof WorkspaceError, String(refused));
    assert.match(refused.message, /\.metis can be written by every user/);
    fs.chmodSync(global, 0o700);
    // The person's dotfiles may keep it elsewhere: the link is followed.
    const dotfiles = tempDir(t, "metis-node-global-dotfiles-");
    const linked = path.join(home, "linked-metis");
    fs.renameSync(global, path.join(dotfiles, ".metis"));
    fs.symlinkSync(path.join(dotfiles, ".metis"), linked);
    const ws = openWorkspace(root, { globalUser: { dir: linked, agentWrites: true } });
    assert.equal(await ws.read(G), "- mine\n");
    await ws.addEntry(G, "- through the link");
    assert.equal(fs.readFileSync(path.join(dotfiles, ".metis", "USER.md"), "utf8"), "- mine\n- through the link\n");
  },
);

test("the kept reading instance is made again when the user's own .metis/ is created, replaced or removed", async (t) => {
  const { root, home, global } = setup(t);
  const ws = openWorkspace(root, { globalUser: { dir: global } });
  assert.equal(await ws.read(G), "");
  const { made } = await instancesMade(async () => {
    given(global, { "USER.md": "- created after the first read\n" });
    assert.equal(await ws.read(G), "- created after the first read\n");
    assert.equal(await ws.read(G), "- created after the first read\n");
    fs.renameSync(global, path.join(home, "old-metis"));
    given(global, { "USER.md": "- a new directory\n" });
    assert.equal(await ws.read(G), "- a new directory\n");
    assert.match(await ws.assembleSystemPrompt(""), /- a new directory/);
    fs.rmSync(global, { recursive: true });
    assert.equal(await ws.read(G), "");
    assert.equal(await ws.exists(G), false);
  });
  assert.equal(made, 3, "one instance for each directory seen: created, replaced, gone");
});

test("the prompt budget shows each section's fill level, and only when asked", async (t) => {
  const { root, metis, global } = setup(t);
  given(metis, { "MEMORY.md": "- builds with cargo\n" });
  given(global, { "USER.md": "- name: Sam\n" });
  const budget = openWorkspace(root, { promptBudget: true });
  assert.equal(budget.promptBudget, true);
  assert.match(await budget.assembleSystemPrompt(""), /## Workspace memory \(MEMORY\.md\) \[0% — 20\/4,096 bytes\]\n- builds with cargo/);
  const both = openWorkspace(root, { promptBudget: true, globalUser: { dir: global } });
  assert.match(
    (await both.session().systemPrompt("")).text,
    /## User context, every workspace \(~\/\.metis\/USER\.md\) \[0% — 12\/3,072 bytes\]\n- name: Sam\n\n## Workspace memory \(MEMORY\.md\) \[0% — 20\/4,096 bytes\]/,
  );
  const plain = openWorkspace(root);
  assert.equal(plain.promptBudget, false);
  assert.doesNotMatch(await plain.assembleSystemPrompt(""), /bytes\]/);
});

test("with the budget or global user memory on, assembleSystemPrompt still fails on a file that is not text", async (t) => {
  const { root, metis, global } = setup(t);
  given(metis, { "USER.md": "- fine\n" });
  fs.writeFileSync(path.join(metis, "MEMORY.md"), Buffer.from([0x2d, 0x20, 0xff, 0x0a]));
  for (const options of [{}, { promptBudget: true }, { globalUser: { dir: global } }]) {
    const ws = openWorkspace(root, options);
    const error = await ws.assembleSystemPrompt("base").catch((e) => e);
    assert.ok(error instanceof InvalidUtf8Error, `${JSON.stringify(options)}: ${error}`);
    assert.equal(error.file, "MEMORY.md");
    assert.equal(error.offset, 2);
    // Composition leaves it out instead, with a note saying how a person fixes it.
    const composed = await ws.composeSystemPrompt("base");
    assert.ok(composed.sources.every((source) => source.file !== "MEMORY.md"), JSON.stringify(composed.sources));
    assert.match(composed.text, /- fine/);
  }
});

test("the settings reach the component as a record, never through the environment: the old variables change nothing", (t) => {
  const { root, metis, global } = setup(t);
  given(global, { "USER.md": "- name: Sam\n" });
  // Every variable 0.3.0's component read, set in the process that runs the package (its
  // worker thread shares the environment): the component reads none of them.
  const env = {
    ...process.env,
    HOME: path.dirname(global),
    METIS_MEMORY_READ_ONLY: "1",
    METIS_MEMORY_READ_ONLY_FS: "1",
    METIS_MEMORY_GLOBAL_USER: "write",
    METIS_MEMORY_PROMPT_BUDGET: "1",
    METIS_MEMORY_OWNER: "00000000000000aa",
  };
  const script = `
    import { openWorkspace } from "metis-memory";
    const ws = openWorkspace(process.argv[1]);
    const added = await ws.addEntry("MEMORY.md", "- added");
    const tool = await ws.callTool("memory_add", { file: "USER.md", entry: "- likes tea" });
    const prompt = await ws.assembleSystemPrompt("base");
    console.log(JSON.stringify({ added: added.afterSizeBytes, tool: tool.result.file, prompt }));
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script, root], { env, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  // Not read-only; the tool's USER.md is the workspace's; no global section, no budget.
  assert.equal(out.added, "- added\n".length);
  assert.equal(out.tool, "USER.md");
  assert.equal(out.prompt, "base\n\n## User context (USER.md)\n- likes tea\n\n## Workspace memory (MEMORY.md)\n- added");
  assert.deepEqual(fs.readdirSync(metis).sort(), ["MEMORY.md", "USER.md"]);
  assert.equal(fs.readFileSync(path.join(global, "USER.md"), "utf8"), "- name: Sam\n");
});

test("globalUser: dir defaults to $HOME/.metis; options of the wrong type are TypeErrors", (t) => {
  const { root, home } = setup(t);
  const saved = process.env.HOME;
  t.after(() => {
    if (saved === undefined) delete process.env.HOME;
    else process.env.HOME = saved;
  });
  process.env.HOME = home;
  assert.deepEqual(openWorkspace(root, { globalUser: {} }).globalUser, { dir: path.join(home, ".metis"), agentWrites: false });
  assert.deepEqual(openWorkspace(root, { globalUser: { agentWrites: true } }).globalUser, { dir: path.join(home, ".metis"), agentWrites: true });
  process.env.HOME = "relative/home";
  assert.throws(() => openWorkspace(root, { globalUser: {} }), /HOME is not an absolute path/);
  delete process.env.HOME;
  assert.throws(() => openWorkspace(root, { globalUser: {} }), /HOME is not set/);
  // Given its directory, it needs no HOME.
  assert.equal(openWorkspace(root, { globalUser: { dir: path.join(home, "mine") } }).globalUser.dir, path.join(home, "mine"));
  for (const globalUser of [true, "~/.metis", null, { dir: 7 }, { agentWrites: "yes" }]) {
    assert.throws(() => openWorkspace(root, { globalUser }), TypeError, JSON.stringify(globalUser));
  }
  assert.equal(openWorkspace(root, { globalUser: undefined }).globalUser, undefined);
});

test("a trap in a write to the user's own USER.md leaves no lock or temporary file in its directory", async (t) => {
  const { root, global } = setup(t);
  const options = { globalUser: { dir: global } };
  const reset = () => openWorkspace(root, options).consolidate(G, "fact\n");
  const add = (fuel) => openWorkspace(root, { ...options, limits: { fuel } }).addEntry(G, "more");
  await reset();
  let [low, high] = [0, 1_000_000]; // the least fuel an add needs, by bisection
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const ok = await add(middle).then(() => true, (e) => (e instanceof TrapError ? false : Promise.reject(e)));
    await reset();
    [low, high] = ok ? [low, middle] : [middle, high];
  }
  let told = 0;
  for (let fuel = Math.floor(high / 2); fuel < high; fuel += Math.max(1, Math.floor(high / 30))) {
    const trapped = await add(fuel).catch((e) => e);
    assert.ok(trapped instanceof TrapError, `fuel ${fuel}: ${trapped}`);
    assert.deepEqual(fs.readdirSync(global), ["USER.md"], `fuel ${fuel}`);
    const now = fs.readFileSync(path.join(global, "USER.md"), "utf8");
    assert.ok(["fact\n", "fact\nmore\n"].includes(now), `fuel ${fuel}: ${JSON.stringify(now)}`);
    if (trapped.written !== null) {
      told += 1;
      assert.equal(trapped.written, now === "fact\nmore\n", `fuel ${fuel}`);
    }
    await reset();
  }
  // The clean-up ran on the user's own directory: it found the trapped call's lock there.
  assert.ok(told > 0, "no trap said whether its write landed");
});

/** Each call of `calls` (name → function returning a promise) fails with a WorkspaceError
 * whose message is exactly `message`. */
async function refusedWith(calls, message) {
  for (const [name, call] of Object.entries(calls)) {
    const error = await call().then((v) => assert.fail(`${name} was not refused: ${JSON.stringify(v)}`), (e) => e);
    assert.ok(error instanceof WorkspaceError, `${name}: ${error}`);
    assert.equal(error.message, message, name);
  }
}

test("a directory of one's own that is not absolute is kept as given and refused by every call", async (t) => {
  const { root, metis } = setup(t);
  // Neither made absolute against the directory the program runs in (a repository,
  // perhaps) nor `~` expanded (an MCP configuration leaves it as written).
  const cwd = tempDir(t, "metis-node-global-cwd-");
  const saved = { cwd: process.cwd(), home: process.env.HOME };
  t.after(() => {
    process.chdir(saved.cwd);
    if (saved.home === undefined) delete process.env.HOME;
    else process.env.HOME = saved.home;
  });
  process.chdir(cwd);
  process.env.HOME = path.join(cwd, "home");
  for (const dir of ["~/.metis", "dotfiles/.metis"]) {
    const ws = openWorkspace(root, { globalUser: { dir, agentWrites: true } });
    await refusedWith(
      {
        read: () => ws.read(G),
        readMemory: () => ws.read("MEMORY.md"),
        prompt: () => ws.composeSystemPrompt("", "omit"),
        sessionPrompt: () => ws.session().systemPrompt(""),
        addEntry: () => ws.addEntry(G, "- name: Sam"),
        addMemory: () => ws.addEntry("MEMORY.md", "- builds with cargo"),
        callTool: () => ws.callTool("memory_add", { file: "USER.md", entry: "- Sam" }),
      },
      `the directory of your own USER.md must be an absolute path, not ${dir}: a relative one would be found inside whatever directory this runs in`,
    );
    assert.deepEqual(ws.globalUser, { dir, agentWrites: true });
    // As the Rust host's: it is listed, and where it is said as given.
    assert.deepEqual(ws.memoryFiles(), ["MEMORY.md", "USER.md", G]);
    assert.equal(ws.filePath(G), path.join(dir, "USER.md"));
  }
  assert.deepEqual(fs.readdirSync(cwd), [], "a relative directory was created");
  assert.ok(!fs.existsSync(metis), "a refused write left the .metis/ it created");
});

test(
  "a link at the user's own .metis another user made is not followed, even with trustForeignMetis",
  { skip: !posix && "no uids on Windows" },
  async (t) => {
    // In a home every user can write, another user could plant a link there leading to a
    // directory of this user's that is not their memory.
    const { root, metis, global } = setup(t);
    const real = path.join(tempDir(t, "metis-node-global-dotfiles-"), "metis");
    given(real, { "USER.md": "- name: Sam\n" });
    fs.symlinkSync(real, global);
    const kept = openWorkspace(root, { globalUser: { dir: global } });
    assert.equal(await kept.read(G), "- name: Sam\n");
    try {
      fs.lchownSync(global, FOREIGN_UID, FOREIGN_UID);
    } catch (e) {
      if (e.code === "EPERM") return t.skip("not root: this process cannot make a link another user's");
      throw e;
    }
    const message = `${global} is a symbolic link made by uid ${FOREIGN_UID}, not by this user (uid ${process.geteuid()}): another user could lead it anywhere, so it is not used ${OWN_MEMORY_HINT}`;
    const ws = openWorkspace(root, { globalUser: { dir: global, agentWrites: true } });
    await refusedWith(
      {
        read: () => ws.read(G),
        readMemory: () => ws.read("MEMORY.md"),
        prompt: () => ws.composeSystemPrompt("", "omit"),
        addEntry: () => ws.addEntry(G, "- likes tea"),
        addMemory: () => ws.addEntry("MEMORY.md", "- builds with cargo"),
        // The kept reading instance is checked again before every read, as `.metis/` is.
        keptRead: () => kept.read(G),
      },
      message,
    );
    assert.equal(fs.readFileSync(path.join(real, "USER.md"), "utf8"), "- name: Sam\n");
    assert.ok(!fs.existsSync(metis), "a refused write left the .metis/ it created");
    await assert.rejects(openWorkspace(root, { globalUser: { dir: global }, trustForeignMetis: true }).read(G), { message });
    fs.lchownSync(global, process.geteuid(), process.getegid());
    assert.equal(await ws.read(G), "- name: Sam\n");
  },
);

test(
  "a user's own .metis/ in a directory every user can write is refused, unless sticky, even with trustForeignMetis",
  { skip: !posix && "no mode bits on Windows" },
  async (t) => {
    // Its parent is checked as a workspace root is: anyone could replace it there.
    const { root, home, metis, global } = setup(t);
    given(global, { "USER.md": "- name: Sam\n" });
    fs.chmodSync(global, 0o700);
    const ws = openWorkspace(root, { globalUser: { dir: global, agentWrites: true } });
    const message = `${home} can be written by every user and has no sticky bit, so another user could replace .metis/ in it: it is not used ${OWN_MEMORY_HINT}`;
    fs.chmodSync(home, 0o777);
    await refusedWith(
      {
        read: () => ws.read(G),
        addEntry: () => ws.addEntry(G, "- likes tea"),
        addMemory: () => ws.addEntry("MEMORY.md", "- builds with cargo"),
      },
      message,
    );
    assert.equal(fs.readFileSync(path.join(global, "USER.md"), "utf8"), "- name: Sam\n");
    assert.ok(!fs.existsSync(metis), "a refused write left the .metis/ it created");
    await assert.rejects(openWorkspace(root, { globalUser: { dir: global }, trustForeignMetis: true }).read(G), { message });
    for (const mode of [0o1777, 0o775]) {
      fs.chmodSync(home, mode);
      assert.equal(await ws.read(G), "- name: Sam\n", mode.toString(8));
    }
  },
);

test("a write through a link at the user's own .metis to a missing directory is refused, saying so", { skip: !posix && "links need privileges on Windows" }, async (t) => {
  const { root, home, metis, global } = setup(t);
  const missing = path.join(home, "missing");
  fs.symlinkSync(missing, global);
  const ws = openWorkspace(root, { globalUser: { dir: global, agentWrites: true } });
  assert.equal(await ws.read(G), "");
  assert.equal(await ws.exists(G), false);
  await refusedWith(
    {
      addEntry: () => ws.addEntry(G, "- name: Sam"),
      addMemory: () => ws.addEntry("MEMORY.md", "- builds with cargo"),
      callTool: () => ws.callTool("memory_add", { file: "USER.md", entry: "- Sam" }),
    },
    `${global} is a symbolic link to ${missing}, which does not exist: create that directory, or remove the link`,
  );
  assert.ok(!fs.existsSync(missing));
  assert.ok(!fs.existsSync(metis), "a refused write left the .metis/ it created");
  fs.mkdirSync(missing);
  await ws.addEntry(G, "- name: Sam");
  assert.equal(fs.readFileSync(path.join(missing, "USER.md"), "utf8"), "- name: Sam\n");
});

test("at home the user's own USER.md is the workspace's, and listed once", async (t) => {
  // A workspace at home: its `.metis/` is the user's own, so its USER.md is one file,
  // which the component composes and writes as the workspace's.
  const { root, home, global } = setup(t);
  const atHome = openWorkspace(home, { globalUser: { dir: global, agentWrites: true } });
  const both = ["MEMORY.md", "USER.md", G];
  // Nothing there yet to tell them apart by.
  assert.deepEqual(atHome.memoryFiles(), both);
  assert.equal(atHome.globalIsWorkspace(), false);
  given(global, { "USER.md": "- name: Sam\n" });
  assert.equal(atHome.globalIsWorkspace(), true);
  assert.deepEqual(atHome.memoryFiles(), ["MEMORY.md", "USER.md"]);
  assert.doesNotMatch(await atHome.assembleSystemPrompt(""), /every workspace/);
  // The same directory through a link is the same directory.
  const link = path.join(tempDir(t, "metis-node-global-link-"), "metis");
  fs.symlinkSync(global, link);
  assert.deepEqual(openWorkspace(home, { globalUser: { dir: link } }).memoryFiles(), ["MEMORY.md", "USER.md"]);
  // Elsewhere, or off, as before.
  const elsewhere = openWorkspace(root, { globalUser: { dir: global } });
  assert.deepEqual(elsewhere.memoryFiles(), both);
  assert.equal(elsewhere.globalIsWorkspace(), false);
  assert.deepEqual(openWorkspace(home).memoryFiles(), ["MEMORY.md", "USER.md"]);
  assert.equal(openWorkspace(home).globalIsWorkspace(), false);
});

// The places table (tests/surfaces/global_user_places.json), as every surface runs it: the
// agent never writes the person's own USER.md under `read`, whatever the workspace.
const places = (() => {
  const root = process.env.METIS_REPO_ROOT;
  if (!root) return [];
  return JSON.parse(fs.readFileSync(path.join(root, "tests", "surfaces", "global_user_places.json"), "utf8")).cases;
})();

test("the places table is found (METIS_REPO_ROOT, set by scripts/test-node)", () => {
  assert.ok(places.length > 0, "METIS_REPO_ROOT is not set: run this suite through scripts/test-node");
});

for (const c of places) {
  test(`places: ${c.name}`, { skip: !posix && "no links or modes on Windows" }, async (t) => {
    const base = tempDir(t, "metis-node-places-");
    for (const dir of c.dirs ?? []) fs.mkdirSync(path.join(base, dir), { recursive: true });
    for (const [file, content] of Object.entries(c.given ?? {})) {
      fs.mkdirSync(path.dirname(path.join(base, file)), { recursive: true });
      fs.writeFileSync(path.join(base, file), content);
    }
    for (const [link, target] of Object.entries(c.links ?? {})) fs.symlinkSync(path.join(base, target), path.join(base, link));
    for (const [p, mode] of Object.entries(c.modes ?? {})) fs.chmodSync(path.join(base, p), parseInt(mode, 8));
    const ws = openWorkspace(path.join(base, c.workspace), {
      globalUser: c.global_user === "off" ? undefined : { dir: path.join(base, c.global_dir), agentWrites: c.global_user === "write" },
      followMetisLink: c.follow_metis_link === true,
      trustForeignMetis: c.trust_foreign_metis === true,
    });
    for (const [n, step] of c.steps.entries()) {
      const at = `step ${n + 1}`;
      if (step.files) {
        for (const [file, expected] of Object.entries(step.files)) {
          const p = path.join(base, file);
          if (expected === null) assert.ok(!fs.existsSync(p) && !isLink(p), `${at}: ${file} exists`);
          else assert.equal(fs.readFileSync(p, "utf8"), expected, `${at}: ${file}`);
        }
        continue;
      }
      const expect = step.expect;
      let ok;
      let text = "";
      let failed = false;
      try {
        if (step.tool) text = (await ws.callTool(step.tool, step.input)).text;
        else await ws.addEntry(step.person_add.file, step.person_add.entry);
        ok = true;
      } catch (e) {
        if (e instanceof WorkspaceError) failed = true;
        else if (!(e instanceof ToolError)) throw e;
        ok = false;
        text = e.message;
      }
      assert.equal(failed, expect.error === true, `${at}: ${text}`);
      if (expect.ok !== undefined) assert.equal(ok, expect.ok, `${at}: ${text}`);
      for (const want of expect.text_contains ?? []) assert.ok(text.includes(want), `${at}: ${text}`);
    }
  });
}

function isLink(p) {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
