// The cross-surface suite (`tests/surfaces/behaviours.json`, its README gives the format)
// against the installed package: one test per row, each session ("A", "B") a
// `Workspace.session()` (`{ snapshot: true }` for a snapshot `open`) of a workspace of its
// own opened on the row's directory, with the options the last `memory_options` step set;
// a `sessionless` step is `Workspace.callTool` on a workspace opened for it. A row has a home of its own (a temporary
// directory, never the real home) for the user's own `.metis/` (`~/.metis/USER.md`). A
// step, or an `expect`, with a key this driver does not know fails the row, naming the key.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { DEFAULT_LIMITS, StoreError, ToolError, TrapError, openWorkspace, version } from "metis-memory";

const ROOT = process.env.METIS_REPO_ROOT;
const TABLE = ROOT && path.join(ROOT, "tests", "surfaces", "behaviours.json");

// Each step's kind (the key that names it), with every key it may have and the checks
// its `expect` may hold.
const STEPS = {
  open: { keys: ["open", "snapshot", "expect"], checks: ["prompt_contains", "prompt_lacks"] },
  start: { keys: ["start"], checks: [] },
  prompt: { keys: ["prompt", "expect"], checks: ["unchanged", "prompt_contains", "prompt_lacks"] },
  update: { keys: ["update", "expect"], checks: ["none", "text_contains", "text_lacks"] },
  call: { keys: ["call", "tool", "input", "expect"], checks: ["ok", "text_contains", "text_lacks"] },
  sessionless: { keys: ["sessionless", "expect"], checks: ["ok", "text_contains", "text_lacks"] },
  next_response: { keys: ["next_response"], checks: [] },
  file: { keys: ["file", "is"], checks: [] },
  version: { keys: ["version"], checks: [] },
  trap_sweep: { keys: ["trap_sweep"], checks: [] },
  read_only_add: { keys: ["read_only_add", "expect"], checks: ["kind", "text_contains"] },
  add_under: { keys: ["add_under", "expect"], checks: ["kind", "text_contains"] },
  metis_holds: { keys: ["metis_holds"], checks: [] },
  root_mode: { keys: ["root_mode"], checks: [] },
  read_refused: { keys: ["read_refused", "expect"], checks: ["kind", "text_contains"] },
  memory_options: { keys: ["memory_options"], checks: [] },
};
// What a `sessionless` step's object may hold.
const SESSIONLESS_KEYS = ["tool", "input", "unheld"];
// What a `memory_options` step may set, and the values each takes.
const MEMORY_OPTIONS = { global_user: ["off", "read", "write"], prompt_budget: [true, false] };
// How a `given` or `file` key names the user's own USER.md: a file in the row's home.
const IN_HOME = "~/";
const ROW_KEYS = ["name", "covers", "given", "steps", "surfaces", "surfaces_why"];
const SURFACE = "node";

class RowFailed extends Error {}

// `add_under`'s child: the add in a process of its own, as `tests/surfaces/under` runs it,
// importing the same installed package as this driver.
const PACKAGE = import.meta.resolve("metis-memory");
const CHILD = `
const { openWorkspace, StoreError } = await import(${JSON.stringify(PACKAGE)});
const [root, file, entry] = process.argv.slice(1);
try {
  await openWorkspace(root).addEntry(file, entry);
  console.log(JSON.stringify({ ok: true }));
} catch (e) {
  if (!(e instanceof StoreError)) throw e;
  console.log(JSON.stringify({ ok: false, kind: e.kind, text: e.message }));
}`;
const UNDER_UNAVAILABLE = 77;

function rows() {
  if (!TABLE || !fs.existsSync(TABLE)) return [];
  return JSON.parse(fs.readFileSync(TABLE, "utf8")).behaviours;
}

test("the table is found and has rows", () => {
  assert.ok(ROOT, "METIS_REPO_ROOT is not set: run this suite through scripts/test-node");
  assert.ok(rows().length > 0, `no behaviours in ${TABLE}`);
});

/** `text` against `expect`'s `${prefix}_contains` and `${prefix}_lacks` lists. */
function checkTexts(expect, prefix, text) {
  for (const wanted of expect[`${prefix}_contains`] ?? []) {
    if (!text.includes(wanted)) throw new RowFailed(`the ${prefix} lacks ${JSON.stringify(wanted)}: ${JSON.stringify(text)}`);
  }
  for (const unwanted of expect[`${prefix}_lacks`] ?? []) {
    if (text.includes(unwanted)) throw new RowFailed(`the ${prefix} holds ${JSON.stringify(unwanted)}: ${JSON.stringify(text)}`);
  }
}

/** A tool call (`call`, a session's or the workspace's) against a `call` step's `expect`:
 * `ok` (whether it wrote), `text_contains`, `text_lacks` (its success text or refusal). */
async function checkToolCall(expect, call) {
  let wrote;
  let text;
  try {
    text = (await call()).text;
    wrote = true;
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    text = e.message;
    wrote = false;
  }
  if (Object.hasOwn(expect, "ok") && expect.ok !== wrote) {
    throw new RowFailed(`expected ok=${expect.ok}, got ok=${wrote}: ${JSON.stringify(text)}`);
  }
  checkTexts(expect, "text", text);
}

/** The version of the WIT package declared in `file` (`package metis:memory@X;`). */
function witVersion(file) {
  const found = /^package metis:memory@([^;\s]+);/m.exec(fs.readFileSync(file, "utf8"));
  if (!found) throw new RowFailed(`no \`package metis:memory@…;\` line in ${file}`);
  return found[1];
}

/** The package as a surface: sessions by name, all on the workspace at `root`, with the
 * user's own `.metis/` in `home`. */
class Driver {
  constructor(root, home) {
    this.root = root;
    this.home = home;
    this.sessions = new Map();
    // The prompt each session was opened with (`open`), which `prompt` compares with.
    this.opened = new Map();
    // As `memory_options` last set them; both start off.
    this.globalUser = "off";
    this.promptBudget = false;
  }

  /** Where `file` (a `given` or `file` key) is on disk: in `.metis/`, or in the home. */
  onDisk(file) {
    if (file.startsWith(IN_HOME)) {
      if (!this.home) throw new RowFailed(`this row has no home for ${JSON.stringify(file)}`);
      return path.join(this.home, file.slice(IN_HOME.length));
    }
    return path.join(this.root, ".metis", file);
  }

  /** The options a session opened now is opened with, as an embedder sets them. */
  options() {
    const G = this.globalUser;
    return {
      globalUser: G === "off" ? undefined : { dir: path.join(this.home, ".metis"), agentWrites: G === "write" },
      promptBudget: this.promptBudget,
    };
  }

  /** A `memory_options` step: the options of every session opened after it. */
  setOptions(set) {
    if (set === null || typeof set !== "object" || Array.isArray(set)) {
      throw new RowFailed(`memory_options is an object, not ${JSON.stringify(set)}`);
    }
    for (const [key, value] of Object.entries(set)) {
      if (!Object.hasOwn(MEMORY_OPTIONS, key)) throw new RowFailed(`this driver does not know the option ${JSON.stringify(key)}`);
      if (!MEMORY_OPTIONS[key].includes(value)) throw new RowFailed(`${key} is one of ${JSON.stringify(MEMORY_OPTIONS[key])}, not ${JSON.stringify(value)}`);
    }
    if (Object.hasOwn(set, "global_user")) this.globalUser = set.global_user;
    if (Object.hasOwn(set, "prompt_budget")) this.promptBudget = set.prompt_budget;
  }

  session(name) {
    if (!this.sessions.has(name)) throw new RowFailed(`session ${JSON.stringify(name)} was never opened`);
    return this.sessions.get(name);
  }

  async run(row) {
    for (const key of Object.keys(row)) {
      if (!ROW_KEYS.includes(key)) throw new RowFailed(`this driver does not know the row key ${JSON.stringify(key)}`);
    }
    for (const [file, text] of Object.entries(row.given ?? {})) {
      const at = this.onDisk(file);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.writeFileSync(at, text);
    }
    for (const [index, step] of row.steps.entries()) {
      try {
        await this.step(step);
      } catch (e) {
        if (!(e instanceof RowFailed)) throw e;
        throw new RowFailed(`step ${index + 1} ${JSON.stringify(step)}: ${e.message}`);
      }
    }
  }

  async step(step) {
    const kinds = Object.keys(STEPS).filter((kind) => Object.hasOwn(step, kind));
    if (kinds.length !== 1) {
      const known = new Set(Object.values(STEPS).flatMap((s) => s.keys));
      const unknown = Object.keys(step).find((key) => !known.has(key));
      if (unknown !== undefined) throw new RowFailed(`this driver does not know the step key ${JSON.stringify(unknown)}`);
      throw new RowFailed(`a step is one of ${Object.keys(STEPS).join(", ")}, not keys ${Object.keys(step).join(", ")}`);
    }
    const [kind] = kinds;
    const { keys, checks } = STEPS[kind];
    for (const key of Object.keys(step)) {
      if (!keys.includes(key)) throw new RowFailed(`this driver does not know the step key ${JSON.stringify(key)}`);
    }
    const expect = step.expect ?? {};
    for (const key of Object.keys(expect)) {
      if (!checks.includes(key)) throw new RowFailed(`this driver does not know the ${kind} check ${JSON.stringify(key)}`);
    }

    switch (kind) {
      case "open": {
        // What a host does before a model call: a session, and the prompt composed.
        if (Object.hasOwn(step, "snapshot") && typeof step.snapshot !== "boolean") {
          throw new RowFailed(`snapshot is true or false, not ${JSON.stringify(step.snapshot)}`);
        }
        const session = openWorkspace(this.root, this.options()).session({ snapshot: step.snapshot === true });
        const prompt = await session.systemPrompt("");
        this.sessions.set(step.open, session);
        this.opened.set(step.open, prompt.text);
        checkTexts(expect, "prompt", prompt.text);
        break;
      }
      case "start":
        // A session whose model is shown nothing: no prompt composed.
        this.sessions.set(step.start, openWorkspace(this.root, this.options()).session());
        this.opened.delete(step.start);
        break;
      case "prompt": {
        const prompt = await this.session(step.prompt).systemPrompt("");
        if (Object.hasOwn(expect, "unchanged")) {
          if (!this.opened.has(step.prompt)) throw new RowFailed(`session ${JSON.stringify(step.prompt)} was started with no prompt to compare with`);
          const opened = this.opened.get(step.prompt);
          if ((prompt.text === opened) !== expect.unchanged) {
            throw new RowFailed(`expected unchanged=${expect.unchanged}: opened with ${JSON.stringify(opened)}, now ${JSON.stringify(prompt.text)}`);
          }
        }
        checkTexts(expect, "prompt", prompt.text);
        break;
      }
      case "update": {
        const update = await this.session(step.update).memoryUpdate();
        if (Object.hasOwn(expect, "none") && (update === null) !== expect.none) {
          throw new RowFailed(`expected none=${expect.none}, got ${JSON.stringify(update)}`);
        }
        if (update === null && (expect.text_contains ?? []).length > 0) throw new RowFailed("there was no update");
        checkTexts(expect, "text", update ?? "");
        break;
      }
      case "call":
        await checkToolCall(expect, () => this.session(step.call).callTool(step.tool, step.input));
        break;
      case "sessionless": {
        const call = step.sessionless;
        if (call === null || typeof call !== "object" || Array.isArray(call)) {
          throw new RowFailed(`sessionless is an object, not ${JSON.stringify(call)}`);
        }
        for (const key of Object.keys(call)) {
          if (!SESSIONLESS_KEYS.includes(key)) throw new RowFailed(`this driver does not know the sessionless key ${JSON.stringify(key)}`);
        }
        if (Object.hasOwn(call, "unheld") && typeof call.unheld !== "boolean") {
          throw new RowFailed(`unheld is true or false, not ${JSON.stringify(call.unheld)}`);
        }
        const ws = openWorkspace(this.root, this.options());
        await checkToolCall(expect, () => ws.callTool(call.tool, call.input, { unheld: call.unheld === true }));
        break;
      }
      case "next_response":
        await this.session(step.next_response).nextResponse();
        break;
      case "file": {
        const file = this.onDisk(step.file);
        const data = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
        if (data === undefined || !data.equals(Buffer.from(step.is, "utf8"))) {
          const shown = data === undefined ? "missing" : JSON.stringify(data.toString("utf8"));
          throw new RowFailed(`${step.file} is ${shown}, expected ${JSON.stringify(step.is)}`);
        }
        break;
      }
      case "read_only_add": {
        const add = step.read_only_add;
        const error = await openWorkspace(this.root, { readOnly: true }).addEntry(add.file, add.entry).then(
          () => undefined,
          (e) => e,
        );
        if (!(error instanceof StoreError)) throw new RowFailed(`a read-only workspace gave ${error}`);
        if (Object.hasOwn(expect, "kind") && error.kind !== expect.kind) {
          throw new RowFailed(`kind ${error.kind}, expected ${expect.kind}: ${error.message}`);
        }
        checkTexts(expect, "text", error.message);
        break;
      }
      case "add_under":
        this.addUnder(step.add_under, expect);
        break;
      case "root_mode":
        fs.chmodSync(this.root, parseInt(step.root_mode, 8));
        break;
      case "read_refused": {
        const error = await openWorkspace(this.root).read(step.read_refused).then(
          (text) => {
            throw new RowFailed(`the read was not refused: ${JSON.stringify(text)}`);
          },
          (e) => e,
        );
        if (error instanceof RowFailed) throw error;
        if (Object.hasOwn(expect, "kind") && error.kind !== expect.kind) {
          throw new RowFailed(`kind ${error.kind}, expected ${expect.kind}: ${error.message}`);
        }
        checkTexts(expect, "text", error.message);
        break;
      }
      case "metis_holds": {
        const held = fs.readdirSync(path.join(this.root, ".metis")).sort();
        const wanted = [...step.metis_holds].sort();
        if (JSON.stringify(held) !== JSON.stringify(wanted)) {
          throw new RowFailed(`.metis/ holds ${JSON.stringify(held)}, expected ${JSON.stringify(wanted)}`);
        }
        break;
      }
      case "trap_sweep":
        await this.trapSweep(step.trap_sweep.file, step.trap_sweep.entry);
        break;
      case "memory_options":
        this.setOptions(step.memory_options);
        break;
      case "version": {
        const wanted = witVersion(path.join(ROOT, step.version));
        if (version !== wanted) {
          throw new RowFailed(`the package reports version ${version}, ${step.version} says ${wanted}`);
        }
        break;
      }
    }
  }
}

/** The add in a child process under `add.cause` (`tests/surfaces/under`). */
Driver.prototype.addUnder = function (add, expect) {
  const under = path.join(ROOT, "tests", "surfaces", "under");
  const argv = [add.cause, this.root, process.execPath, "--input-type=module", "-e", CHILD, this.root, add.file, add.entry];
  const done = spawnSync(under, argv, { encoding: "utf8", cwd: this.root });
  if (done.status === UNDER_UNAVAILABLE) {
    console.log(`skipped: ${done.stderr.trim()}`);
    return;
  }
  if (done.signal) throw new RowFailed(`killed by ${done.signal}: ${done.stderr}`);
  let outcome;
  try {
    outcome = JSON.parse(done.stdout);
  } catch {
    throw new RowFailed(`the child failed: ${done.stderr}`);
  }
  if (outcome.ok) throw new RowFailed(`the add under ${add.cause} wrote`);
  if (Object.hasOwn(expect, "kind") && outcome.kind !== expect.kind) {
    throw new RowFailed(`kind ${outcome.kind}, expected ${expect.kind}: ${outcome.text}`);
  }
  checkTexts(expect, "text", outcome.text);
};

/** `addEntry(file, entry)` with `fuel`: the TrapError if it trapped, else undefined. */
async function addWithFuel(root, file, entry, fuel) {
  try {
    await openWorkspace(root, { limits: { fuel } }).addEntry(file, entry);
    return undefined;
  } catch (e) {
    if (e instanceof TrapError) return e;
    throw e;
  }
}

/** Adds that trap at 20 budgets under what the add needs, each retried only as the trap's
 * `written` says: the file must hold the entry exactly once every time. */
Driver.prototype.trapSweep = async function (file, entry) {
  const at = path.join(this.root, ".metis", file);
  const given = fs.existsSync(at) ? fs.readFileSync(at) : Buffer.alloc(0);
  const attempt = (fuel) => {
    fs.writeFileSync(at, given);
    return addWithFuel(this.root, file, entry, fuel);
  };
  if ((await attempt(DEFAULT_LIMITS.fuel)) !== undefined) throw new RowFailed("the add traps even with the default fuel");
  let [low, high] = [1, DEFAULT_LIMITS.fuel];
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if ((await attempt(middle)) === undefined) high = middle;
    else low = middle;
  }
  const expected = Buffer.concat([given, Buffer.from(`${entry}\n`)]);
  let [trapped, told] = [0, 0];
  for (let i = 0; i < 20; i++) {
    const fuel = Math.floor(high / 2) + Math.floor((high * i) / 40);
    const trap = await attempt(fuel);
    if (trap === undefined) continue;
    trapped++;
    if (trap.written !== null) told++;
    const landed = trap.written ?? fs.readFileSync(at).equals(expected);
    if (!landed) await addWithFuel(this.root, file, entry, DEFAULT_LIMITS.fuel);
    const now = fs.readFileSync(at);
    if (!now.equals(expected)) {
      throw new RowFailed(`fuel ${fuel}: written=${trap.written}, then ${JSON.stringify(now.toString())}`);
    }
  }
  if (trapped === 0 || told === 0) throw new RowFailed(`${trapped} traps, ${told} of them said whether they landed`);
};

for (const [i, row] of rows().entries()) {
  const forThis = !row.surfaces || row.surfaces.includes(SURFACE);
  test(row.name ?? `row ${i + 1}`, { skip: forThis ? false : `not for this surface: ${row.surfaces_why}` }, async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-surfaces-"));
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    // The row's own home, for the user's own `.metis/`: never the real one.
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-surfaces-home-"));
    t.after(() => fs.rmSync(home, { recursive: true, force: true }));
    try {
      await new Driver(root, home).run(row);
    } catch (e) {
      if (!(e instanceof RowFailed)) throw e;
      assert.fail(`${row.name}: ${e.message}`);
    }
  });
}

test("a step or check this driver does not know fails the row, naming it", async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-surfaces-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const failure = (row) => new Driver(root).run(row).then(() => undefined, (e) => e);
  const unknownStep = await failure({ name: "x", given: {}, steps: [{ teleport: "A" }] });
  assert.ok(unknownStep instanceof RowFailed && /step key "teleport"/.test(unknownStep.message), String(unknownStep));
  const unknownCheck = await failure({ name: "x", given: {}, steps: [{ open: "A", expect: { prompt_rhymes: true } }] });
  assert.ok(unknownCheck instanceof RowFailed && /open check "prompt_rhymes"/.test(unknownCheck.message), String(unknownCheck));
  const extraKey = await failure({ name: "x", given: {}, steps: [{ open: "A", as: "B" }] });
  assert.ok(extraKey instanceof RowFailed && /step key "as"/.test(extraKey.message), String(extraKey));
  const unknownRowKey = await failure({ name: "x", given: {}, steps: [], when: "now" });
  assert.ok(unknownRowKey instanceof RowFailed && /row key "when"/.test(unknownRowKey.message), String(unknownRowKey));
  const unknownOption = await failure({ name: "x", given: {}, steps: [{ memory_options: { global_user: "read", colour: "blue" } }] });
  assert.ok(unknownOption instanceof RowFailed && /option "colour"/.test(unknownOption.message), String(unknownOption));
  const badValue = await failure({ name: "x", given: {}, steps: [{ memory_options: { global_user: "sometimes" } }] });
  assert.ok(badValue instanceof RowFailed && /global_user is one of/.test(badValue.message), String(badValue));
  const unknownSessionless = await failure({ name: "x", given: {}, steps: [{ sessionless: { tool: "memory_add", input: {}, held: false } }] });
  assert.ok(unknownSessionless instanceof RowFailed && /sessionless key "held"/.test(unknownSessionless.message), String(unknownSessionless));
  const unknownUpdateCheck = await failure({ name: "x", given: {}, steps: [{ start: "A" }, { update: "A", expect: { prompt_contains: [] } }] });
  assert.ok(unknownUpdateCheck instanceof RowFailed && /update check "prompt_contains"/.test(unknownUpdateCheck.message), String(unknownUpdateCheck));
});

test("the checks of start, prompt, update and sessionless fail a row where they do not hold", async (t) => {
  const failure = async (steps) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-surfaces-"));
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const given = { "MEMORY.md": "- a\n" };
    return new Driver(root).run({ name: "x", given, steps }).then(() => undefined, (e) => e);
  };
  const add = (session, entry) => ({ call: session, tool: "memory_add", input: { file: "MEMORY.md", entry }, expect: { ok: true } });
  // A session that is not a snapshot composes its prompt afresh: not unchanged.
  const recomposed = await failure([{ open: "A" }, { open: "B" }, add("B", "- b"), { prompt: "A", expect: { unchanged: true } }]);
  assert.ok(recomposed instanceof RowFailed && /expected unchanged=true/.test(recomposed.message), String(recomposed));
  const kept = await failure([{ open: "A", snapshot: true }, { open: "B" }, add("B", "- b"), { prompt: "A", expect: { unchanged: false } }]);
  assert.ok(kept instanceof RowFailed && /expected unchanged=false/.test(kept.message), String(kept));
  const started = await failure([{ start: "A" }, { prompt: "A", expect: { unchanged: true } }]);
  assert.ok(started instanceof RowFailed && /no prompt to compare with/.test(started.message), String(started));
  const news = await failure([{ open: "A", snapshot: true }, { open: "B" }, add("B", "- b"), { update: "A", expect: { none: true } }]);
  assert.ok(news instanceof RowFailed && /expected none=true, got ".*- b/.test(news.message), String(news));
  const nothing = await failure([{ open: "A", snapshot: true }, { update: "A", expect: { text_contains: ["- a"] } }]);
  assert.ok(nothing instanceof RowFailed && /there was no update/.test(nothing.message), String(nothing));
  const held = await failure([{ sessionless: { tool: "memory_consolidate", input: { file: "MEMORY.md", content: "- z\n" } }, expect: { ok: true } }]);
  assert.ok(held instanceof RowFailed && /expected ok=true, got ok=false: "You have not been shown MEMORY.md/.test(held.message), String(held));
  const unheld = await failure([{ sessionless: { tool: "memory_consolidate", input: { file: "MEMORY.md", content: "- z\n" }, unheld: true }, expect: { ok: false } }]);
  assert.ok(unheld instanceof RowFailed && /expected ok=false, got ok=true/.test(unheld.message), String(unheld));
  const unshown = await failure([{ start: "A" }, { call: "A", tool: "memory_consolidate", input: { file: "MEMORY.md", content: "- z\n" }, expect: { ok: true } }]);
  assert.ok(unshown instanceof RowFailed && /expected ok=true, got ok=false/.test(unshown.message), String(unshown));
});

test("memory_options apply to the sessions opened after the step, in the row's own home", async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-surfaces-"));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-surfaces-home-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  const driver = new Driver(root, home);
  await driver.run({
    name: "x",
    given: { "~/.metis/USER.md": "- name: Sam\n" },
    steps: [
      { open: "before", expect: { prompt_lacks: ["name: Sam"] } },
      { memory_options: { global_user: "write", prompt_budget: true } },
      { open: "after", expect: { prompt_contains: ["(~/.metis/USER.md) [0% — 12/3,072 bytes]\n- name: Sam"] } },
      { call: "after", tool: "memory_add", input: { file: "USER.md", entry: "- likes tea" }, expect: { ok: true } },
      { file: "~/.metis/USER.md", is: "- name: Sam\n- likes tea\n" },
      { memory_options: { prompt_budget: false } },
    ],
  });
  assert.equal(fs.readFileSync(path.join(home, ".metis", "USER.md"), "utf8"), "- name: Sam\n- likes tea\n");
  // The session opened before the step kept the options it was opened with.
  assert.equal(driver.session("before").workspace.globalUser, undefined);
  assert.deepEqual(driver.options(), { globalUser: { dir: path.join(home, ".metis"), agentWrites: true }, promptBudget: false });
});
