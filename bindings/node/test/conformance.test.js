// Runs every case in tests/conformance/ (the format is in its README) against the
// installed package, one test per case, with the checks every runner makes on every
// step: a refused step changes nothing, no entry but the two memory files appears, a
// write's hashes and sizes are those of the bytes on disk, and `final` is exhaustive.
// The same checks as core/tests/conformance_format/mod.rs.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  openWorkspace,
  StoreError,
  ToolError,
  TrapError,
  WorkspaceError,
} from "metis-memory";

const dir =
  process.env.METIS_CONFORMANCE_DIR ??
  new URL("../../../tests/conformance/", import.meta.url).pathname;
const suites = fs
  .readdirSync(dir)
  .filter((name) => name.endsWith(".json"))
  .sort();

let cases = 0;
for (const suite of suites) {
  const stem = suite.slice(0, -".json".length);
  const { cases: list } = JSON.parse(fs.readFileSync(path.join(dir, suite), "utf8"));
  for (const c of list) {
    cases += 1;
    test(`${stem}::${c.name}`, () => runCase(c));
  }
}

// A floor, not the exact count (as in the Rust runner): catches a wrong directory or a
// suite that stopped parsing into cases.
test("the conformance suites hold at least 80 cases", () => {
  assert.ok(cases >= 80, `expected at least 80 cases in ${dir}, found ${cases}`);
});

async function runCase(c) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-conformance-"));
  try {
    const ws = openWorkspace(root);
    const metis = path.join(root, ".metis");
    if (c.given) {
      fs.mkdirSync(metis);
      for (const [name, spec] of Object.entries(c.given)) {
        if (spec !== null && typeof spec === "object" && "directory" in spec) {
          fs.mkdirSync(path.join(metis, name));
        } else {
          fs.writeFileSync(path.join(metis, name), content(spec));
        }
      }
    }
    for (const [index, step] of c.steps.entries()) {
      const before = snapshot(metis);
      const actual = await runStep(ws, step);
      const after = snapshot(metis);
      const at = `step ${index} (${JSON.stringify(step).slice(0, 300)})`;
      if (step.expect) {
        const problem = mismatch(step.expect, actual, "");
        if (problem) {
          assert.fail(`${at}: ${problem}\n  got: ${JSON.stringify(actual, null, 2)}`);
        }
      }
      const broken = checkInvariants(actual, before, after);
      if (broken) assert.fail(`${at}: ${broken}`);
    }
    if (c.final) {
      const broken = checkFinal(c.final, snapshot(metis));
      if (broken) assert.fail(`final: ${broken}`);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** A content spec: a string, `{base64}`, `{repeat, times}`, or an array of specs. */
function content(spec) {
  if (typeof spec === "string") return Buffer.from(spec, "utf8");
  if (Array.isArray(spec)) return Buffer.concat(spec.map(content));
  if (spec && "base64" in spec) return Buffer.from(spec.base64, "base64");
  if (spec && "repeat" in spec) {
    const one = content(spec.repeat);
    return Buffer.concat(Array.from({ length: spec.times }, () => one));
  }
  throw new Error(`not a content spec: ${JSON.stringify(spec)}`);
}

function text(step, key) {
  return new TextDecoder("utf-8", { fatal: true }).decode(content(step[key]));
}

/** Runs one step; `{ok: VALUE}` or `{error: VALUE}` in the README's shapes. */
async function runStep(ws, step) {
  try {
    return { ok: await runOp(ws, step) };
  } catch (e) {
    return { error: errorJson(e) };
  }
}

async function runOp(ws, step) {
  if (step.tool !== undefined) {
    const input = "input" in step ? JSON.stringify(step.input) : text(step, "input_text");
    // The cases are the component's `call`, and `call-with-options` with `seen`/`withheld`
    // and `hold-unseen: false`: unheld, by name.
    const options =
      step.seen === undefined && step.withheld === undefined
        ? { unheld: true }
        : { seen: step.seen ?? {}, withheld: step.withheld ?? [], unheld: true };
    return toolSuccessJson(await ws.callTool(step.tool, input, options));
  }
  const file = step.file;
  switch (step.op) {
    case "read":
      return ws.read(file);
    case "exists":
      return ws.exists(file);
    case "size-bytes":
      return ws.sizeBytes(file);
    case "soft-cap":
      return ws.softCap(file);
    case "hard-cap":
      return ws.hardCap(file);
    case "add-entry":
      return writeResultJson(await ws.addEntry(file, text(step, "entry")));
    case "replace":
      return writeResultJson(await ws.replace(file, text(step, "old"), text(step, "new")));
    case "consolidate":
      return writeResultJson(await ws.consolidate(file, text(step, "content")));
    case "consolidate-if-unchanged":
      return writeResultJson(
        await ws.consolidateIfUnchanged(file, text(step, "content"), step.expected_hash),
      );
    case "assemble-system-prompt":
      return ws.assembleSystemPrompt(text(step, "base"));
    case "compose-system-prompt": {
      const composed = await ws.composeSystemPrompt(text(step, "base"), step.audit ?? "off");
      return {
        text: composed.text,
        sources: composed.sources.map((s) => ({
          file: s.file,
          sha256: s.sha256,
          size_bytes: s.sizeBytes,
          included: s.included,
          findings: s.findings,
        })),
      };
    }
    case "audit":
      return ws.audit(file);
    case "tool-definitions":
      return ws.toolDefinitions();
    default:
      throw new Error(`unknown op ${step.op}`);
  }
}

function writeResultJson(r) {
  return {
    file: r.file,
    before_hash: r.beforeHash,
    after_hash: r.afterHash,
    before_size_bytes: r.beforeSizeBytes,
    after_size_bytes: r.afterSizeBytes,
    over_soft_cap: r.overSoftCap,
    over_hard_cap: r.overHardCap,
  };
}

function toolSuccessJson(s) {
  return {
    is_error: false,
    text: s.text,
    result: { ...writeResultJson(s.result), operation: s.operation },
    events: s.events,
  };
}

const SNAKE = {
  attemptedBytes: "attempted_bytes",
  capBytes: "cap_bytes",
  count: "count",
  offset: "offset",
  expectedHash: "expected_hash",
  currentHash: "current_hash",
  currentContent: "current_content",
  findings: "findings",
  sizeBytes: "size_bytes",
  limitBytes: "limit_bytes",
};

function errorJson(e) {
  if (e instanceof ToolError) {
    return { message: e.message, is_user_visible: e.isUserVisible, shown: e.shown };
  }
  if (e instanceof StoreError) {
    const value = { kind: e.kind, message: e.message, file: e.file };
    for (const [camel, snake] of Object.entries(SNAKE)) {
      if (camel in e) value[snake] = e[camel];
    }
    return value;
  }
  if (e instanceof TrapError) return { kind: "trap", message: e.message };
  if (e instanceof WorkspaceError) return { kind: "workspace", message: e.message };
  throw e; // A bug in the package or the runner: fail the case loudly.
}

/** Every key of `expected` must match in `actual` (objects partially, arrays element by
 * element and of equal length); `message_starts_with` checks a prefix of `message`.
 * Returns what does not match, or undefined. */
function mismatch(expected, actual, at) {
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  if (isObject(expected) && isObject(actual)) {
    for (const [key, value] of Object.entries(expected)) {
      if (key === "message_starts_with") {
        const message = typeof actual.message === "string" ? actual.message : "";
        if (!message.startsWith(value)) {
          return `${at}.message: ${JSON.stringify(message)} does not start with ${JSON.stringify(value)}`;
        }
        continue;
      }
      if (!(key in actual)) return `${at}.${key}: missing`;
      const problem = mismatch(value, actual[key], `${at}.${key}`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (Array.isArray(expected) && Array.isArray(actual) && expected.length === actual.length) {
    for (const [i, value] of expected.entries()) {
      const problem = mismatch(value, actual[i], `${at}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isDeepStrictEqual(expected, actual)) return undefined;
  return `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

const MEMORY_FILES = ["MEMORY.md", "USER.md"];

/** Whether `.metis/` exists, and each entry by name: a file's bytes, or its kind. */
function snapshot(metis) {
  let dirents;
  try {
    dirents = fs.readdirSync(metis, { withFileTypes: true });
  } catch {
    let exists = true;
    try {
      fs.lstatSync(metis);
    } catch {
      exists = false;
    }
    return { exists, entries: new Map() };
  }
  const entries = new Map();
  for (const d of dirents) {
    const full = path.join(metis, d.name);
    let entry;
    if (d.isFile()) entry = { file: fs.readFileSync(full) };
    else if (d.isDirectory()) entry = { dir: true };
    else if (d.isSymbolicLink()) entry = { symlink: fs.readlinkSync(full) };
    else if (d.isFIFO()) entry = { other: "fifo" };
    else if (d.isSocket()) entry = { other: "socket" };
    else entry = { other: "special file" };
    entries.set(d.name, entry);
  }
  return { exists: true, entries };
}

function show(entries) {
  const shown = [...entries].map(([name, e]) => {
    if (e.file) {
      const t = e.file.toString("utf8");
      return e.file.length > 80
        ? `${name}: ${JSON.stringify(t.slice(0, 60))}… (${e.file.length} bytes)`
        : `${name}: ${JSON.stringify(t)}`;
    }
    if (e.dir) return `${name}: a directory`;
    if (e.symlink !== undefined) return `${name}: a symlink to ${e.symlink}`;
    return `${name}: a ${e.other}`;
  });
  return `{${shown.join(", ")}}`;
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

function checkInvariants(actual, before, after) {
  if (actual.error !== undefined && !isDeepStrictEqual(before, after)) {
    return `a refused call changed .metis/: before ${show(before.entries)} (exists: ${before.exists}), after ${show(after.entries)} (exists: ${after.exists})`;
  }
  for (const name of after.entries.keys()) {
    if (!before.entries.has(name) && !MEMORY_FILES.includes(name)) {
      return `new entry ${name} left in .metis/`;
    }
  }
  const ok = actual.ok;
  if (ok === null || typeof ok !== "object") return undefined;
  // A tool call's write result is under `result`, beside its `events`.
  const result = "events" in ok ? ok.result : ok;
  if (!result || !("before_hash" in result) || typeof result.file !== "string") return undefined;
  const file = result.file;
  const bytes = (snap) => {
    const entry = snap.entries.get(file);
    if (entry === undefined) return Buffer.alloc(0);
    if (entry.file) return entry.file;
    throw new Error(`${file} is not a regular file around a successful write`);
  };
  let old;
  let now;
  try {
    old = bytes(before);
    now = bytes(after);
  } catch (e) {
    return e.message;
  }
  if (!after.entries.has(file)) return `${file} does not exist after a successful write`;
  const checks = [
    ["before_hash", sha256(old)],
    ["after_hash", sha256(now)],
    ["before_size_bytes", old.length],
    ["after_size_bytes", now.length],
  ];
  for (const [key, want] of checks) {
    if (result[key] !== want) {
      return `${key} is ${JSON.stringify(result[key])}, but the bytes on disk give ${JSON.stringify(want)}`;
    }
  }
  if ("events" in ok) {
    const updated = ok.events[0];
    if (updated?.type !== "memory.updated" || updated.payload.file !== file) {
      return `the first event is not memory.updated on ${file}`;
    }
    for (const [key, want] of checks) {
      if (updated.payload[key] !== want) return `memory.updated ${key} does not match the write`;
    }
  }
  return undefined;
}

function checkFinal(expected, found) {
  const wantDir = expected.metis_dir ?? true;
  if (typeof wantDir !== "boolean") return "metis_dir is not a boolean";
  if (found.exists !== wantDir) {
    return `.metis/ exists: ${found.exists}, expected ${wantDir} (holding ${show(found.entries)})`;
  }
  const wanted = new Map();
  for (const [name, spec] of Object.entries(expected)) {
    if (name === "metis_dir" || spec === null) continue;
    wanted.set(name, typeof spec === "object" && "directory" in spec ? { dir: true } : { file: content(spec) });
  }
  const sorted = (m) => new Map([...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  if (!isDeepStrictEqual(sorted(wanted), sorted(found.entries))) {
    return `.metis/ holds ${show(found.entries)}, expected exactly ${show(wanted)}`;
  }
  return undefined;
}
