// The Promise API off the loop's thread: every call's work (jco's instantiation, the
// component, preview2-shim's file system with its syncs) runs on one worker thread per
// process (worker.js), which owns the instances; calls are posted to it in the order
// made, and their values, or their errors made again as the same classes with the same
// fields, come back. What needs no instance (the workspace's settings, `memoryFiles`,
// `globalIsWorkspace`, `filePath`, and checking arguments) is answered here, as before.

import { SHARE_ENV, Worker } from "node:worker_threads";
import * as errors from "./errors.js";
import { Workspace as LocalWorkspace } from "./workspace.js";
import { Session } from "./session.js";
import { auditPolicy, scanPolicy, text, toolInput, witFile } from "./values.js";

const ERROR_CLASSES = {
  ...Object.fromEntries(Object.entries(errors).filter(([, v]) => typeof v === "function" && v.prototype instanceof Error)),
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** Where this process's tests name a module for the worker to import first (it watches
 * the guest's filesystem calls there: test/hook-channel.js). */
const WORKER_HOOKS = Symbol.for("metis-memory.test-worker-hooks");

let worker;
let nextId = 1;
const pending = new Map();

function theWorker() {
  if (worker) return worker;
  const started = new Worker(new URL("./worker.js", import.meta.url), {
    // Only the package: none of this process's options or loaders.
    execArgv: [],
    env: SHARE_ENV,
    // A test-only module the worker imports before any call, read when it starts: set
    // by this process's own code (a child process inherits nothing of it).
    workerData: { hooks: globalThis[WORKER_HOOKS] },
  });
  started.on("message", received);
  // A thread that failed or exited fails the calls posted to it; the next call starts
  // another (the instances it kept are gone with it).
  const fail = (error) => {
    if (worker !== started) return;
    worker = undefined;
    const all = [...pending.values()];
    pending.clear();
    for (const p of all) p.reject(new errors.TrapError(`the memory component's thread failed: ${error?.message ?? error}`, { cause: error }));
  };
  started.on("error", fail);
  started.on("exit", (code) => fail(new Error(`the memory component's thread exited with ${code}`)));
  started.unref();
  worker = started;
  return worker;
}

function received({ id, value, error, state }) {
  const p = pending.get(id);
  if (!p) return;
  pending.delete(id);
  if (pending.size === 0) worker?.unref();
  // Settled in a turn of the loop after the reply came (the check phase's immediates go
  // in the order scheduled): replies that come at once are handed over in one callback,
  // which must not settle a call ahead of an immediate scheduled before it was made.
  setImmediate(() => {
    if (state !== undefined) p.onState?.(deepFreeze(state));
    if (error) p.reject(errorFrom(error));
    else p.resolve(value);
  });
}

function post(message, onState) {
  return new Promise((resolve, reject) => {
    const w = theWorker();
    const id = nextId++;
    pending.set(id, { resolve, reject, onState });
    if (pending.size === 1) w.ref();
    try {
      w.postMessage({ id, ...message });
    } catch (e) {
      pending.delete(id);
      if (pending.size === 0) w.unref();
      reject(e);
    }
  });
}

function send(message) {
  theWorker().postMessage(message);
}

/** An error posted back (worker.js's `serializeError`), made again. */
function errorFrom(data) {
  if (!("cls" in data)) return data.thrown;
  const Class = ERROR_CLASSES[data.cls] ?? Error;
  const e = Object.create(Class.prototype);
  Object.defineProperty(e, "message", { value: data.message, writable: true, configurable: true });
  Object.defineProperty(e, "stack", { value: data.stack, writable: true, configurable: true });
  if (data.hasCause) Object.defineProperty(e, "cause", { value: errorFrom(data.cause), writable: true, configurable: true });
  Object.assign(e, data.props);
  return e;
}

function deepFreeze(value) {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const dropper = new FinalizationRegistry((message) => {
  if (worker) send(message);
});

let nextWorkspace = 1;
let nextSession = 1;

class Workspace {
  #local;
  #wid = nextWorkspace++;
  #init;

  constructor(root, options = {}) {
    const local = new LocalWorkspace(root, options);
    this.#local = local;
    this.#init = {
      root: local.root,
      options: {
        followMetisLink: options.followMetisLink === true,
        readOnly: local.readOnly,
        trustForeignMetis: options.trustForeignMetis === true,
        limits: { ...local.limits },
        globalUser: local.globalUser && { ...local.globalUser },
        promptBudget: local.promptBudget,
      },
    };
    dropper.register(this, { op: "drop", wid: this.#wid });
  }

  get readOnly() {
    return this.#local.readOnly;
  }

  get root() {
    return this.#local.root;
  }

  get limits() {
    return this.#local.limits;
  }

  get metisDir() {
    return this.#local.metisDir;
  }

  get globalUser() {
    return this.#local.globalUser;
  }

  get promptBudget() {
    return this.#local.promptBudget;
  }

  memoryFiles() {
    return this.#local.memoryFiles();
  }

  globalIsWorkspace() {
    return this.#local.globalIsWorkspace();
  }

  filePath(file) {
    return this.#local.filePath(file);
  }

  #post(op, extra, onState) {
    return post({ op, wid: this.#wid, ...this.#init, ...extra }, onState);
  }

  #call(method, args) {
    return this.#post("call", { method, args });
  }

  async read(file) {
    witFile(file);
    return this.#call("read", [file]);
  }

  async exists(file) {
    witFile(file);
    return this.#call("exists", [file]);
  }

  async sizeBytes(file) {
    witFile(file);
    return this.#call("sizeBytes", [file]);
  }

  async softCap(file) {
    witFile(file);
    return this.#call("softCap", [file]);
  }

  async hardCap(file) {
    witFile(file);
    return this.#call("hardCap", [file]);
  }

  async addEntry(file, entry) {
    text(entry, "entry");
    witFile(file);
    return this.#call("addEntry", [file, entry]);
  }

  async replace(file, oldText, newText) {
    text(oldText, "oldText");
    text(newText, "newText");
    witFile(file);
    return this.#call("replace", [file, oldText, newText]);
  }

  async consolidate(file, content) {
    text(content, "content");
    witFile(file);
    return this.#call("consolidate", [file, content]);
  }

  async consolidateIfUnchanged(file, content, expectedHash) {
    text(content, "content");
    text(expectedHash, "expectedHash");
    witFile(file);
    return this.#call("consolidateIfUnchanged", [file, content, expectedHash]);
  }

  async assembleSystemPrompt(base = "") {
    text(base, "base");
    return this.#call("assembleSystemPrompt", [base]);
  }

  async composeSystemPrompt(base = "", audit = "off") {
    text(base, "base");
    auditPolicy(audit);
    return this.#call("composeSystemPrompt", [base, audit]);
  }

  async audit(file) {
    witFile(file);
    return this.#call("audit", [file]);
  }

  async toolDefinitions() {
    return this.#call("toolDefinitions", []);
  }

  async callTool(name, input, options = {}) {
    text(name, "name");
    const inputText = toolInput(input);
    const { seen, withheld, scan, unheld } = options;
    scanPolicy(scan);
    return this.#call("callTool", [name, inputText, { seen, withheld, scan, unheld }]);
  }

  session({ audit = "omit", scan, snapshot = false } = {}) {
    auditPolicy(audit);
    scanPolicy(scan);
    const sid = nextSession++;
    send({ op: "session", wid: this.#wid, ...this.#init, sid, sessionOptions: { audit, scan, snapshot } });
    const call = (method, args, keep) =>
      this.#post("sessionCall", { sid, method, args }, (state) => keep(undefined, state));
    const session = new Session(this, audit, snapshot === true, {
      systemPrompt: (base, _kept, keep) => {
        text(base, "base");
        return call("systemPrompt", [base], keep);
      },
      memoryUpdate: (_kept, keep) => call("memoryUpdate", [], keep),
      showFile: (file, whole, _kept, keep) => {
        witFile(file);
        return call("showFile", [file, { whole }], keep);
      },
      callTool: async (name, input, _kept, keep) => {
        text(name, "name");
        return call("callTool", [name, toolInput(input)], keep);
      },
      nextResponse: (_kept, keep) => call("nextResponse", [], keep),
    });
    dropper.register(session, { op: "dropSession", sid });
    return session;
  }
}

/** The workspace at `root` (its memory lives in `root/.metis/`). Nothing is touched
 * until a call is made. Options: `followMetisLink`, `readOnly`, `trustForeignMetis`,
 * `limits`, `globalUser` (`{ dir, agentWrites }`: global user memory on, `dir` defaulting
 * to `$HOME/.metis`), `promptBudget`. */
export function openWorkspace(root, options) {
  return new Workspace(root, options);
}
