// The cross-surface suite (`tests/surfaces/behaviours.json`, its README gives the format)
// against the installed package: one test per row, each session ("A", "B") a
// `Workspace.session()` of a workspace of its own opened on the row's directory. A step,
// or an `expect`, with a key this driver does not know fails the row, naming the key.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ToolError, openWorkspace, version } from "metis-memory";

const ROOT = process.env.METIS_REPO_ROOT;
const TABLE = ROOT && path.join(ROOT, "tests", "surfaces", "behaviours.json");

// Each step's kind (the key that names it), with every key it may have and the checks
// its `expect` may hold.
const STEPS = {
  open: { keys: ["open", "expect"], checks: ["prompt_contains", "prompt_lacks"] },
  call: { keys: ["call", "tool", "input", "expect"], checks: ["ok", "text_contains", "text_lacks"] },
  next_response: { keys: ["next_response"], checks: [] },
  file: { keys: ["file", "is"], checks: [] },
  version: { keys: ["version"], checks: [] },
};
const ROW_KEYS = ["name", "covers", "given", "steps"];

class RowFailed extends Error {}

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

/** The version of the WIT package declared in `file` (`package metis:memory@X;`). */
function witVersion(file) {
  const found = /^package metis:memory@([^;\s]+);/m.exec(fs.readFileSync(file, "utf8"));
  if (!found) throw new RowFailed(`no \`package metis:memory@…;\` line in ${file}`);
  return found[1];
}

/** The package as a surface: sessions by name, all on the workspace at `root`. */
class Driver {
  constructor(root) {
    this.root = root;
    this.sessions = new Map();
  }

  session(name) {
    if (!this.sessions.has(name)) throw new RowFailed(`session ${JSON.stringify(name)} was never opened`);
    return this.sessions.get(name);
  }

  async run(row) {
    for (const key of Object.keys(row)) {
      if (!ROW_KEYS.includes(key)) throw new RowFailed(`this driver does not know the row key ${JSON.stringify(key)}`);
    }
    const metis = path.join(this.root, ".metis");
    for (const [file, text] of Object.entries(row.given ?? {})) {
      fs.mkdirSync(metis, { recursive: true });
      fs.writeFileSync(path.join(metis, file), text);
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
        const session = openWorkspace(this.root).session();
        const prompt = await session.systemPrompt("");
        this.sessions.set(step.open, session);
        checkTexts(expect, "prompt", prompt.text);
        break;
      }
      case "call": {
        let wrote;
        let text;
        try {
          text = (await this.session(step.call).callTool(step.tool, step.input)).text;
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
        break;
      }
      case "next_response":
        await this.session(step.next_response).nextResponse();
        break;
      case "file": {
        const file = path.join(this.root, ".metis", step.file);
        const data = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
        if (data === undefined || !data.equals(Buffer.from(step.is, "utf8"))) {
          const shown = data === undefined ? "missing" : JSON.stringify(data.toString("utf8"));
          throw new RowFailed(`${step.file} is ${shown}, expected ${JSON.stringify(step.is)}`);
        }
        break;
      }
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

for (const [i, row] of rows().entries()) {
  test(row.name ?? `row ${i + 1}`, async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-surfaces-"));
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    try {
      await new Driver(root).run(row);
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
});
