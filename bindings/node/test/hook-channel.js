// A test helper: the test's thread's side of the hooks installed inside the package's
// worker thread (worker-hooks.js, which the package imports there when
// this thread names it). The worker owns the component's instances, so the
// WASI filesystem calls its guests make, and the instances it makes, happen there; each
// hooked call is handed to this thread, which runs the test's own function for it
// (synchronously, as a hook in the same thread would: the worker waits), and `call()`
// runs the real call in the worker, its error coming back. Shared memory (Atomics)
// carries the hand-offs; a BroadcastChannel wakes this thread for a call while it waits
// on the package's Promise.

import { BroadcastChannel, isMainThread } from "node:worker_threads";

// Read by the package when it starts its worker (remote.js): this process's worker only.
if (isMainThread) globalThis[Symbol.for("metis-memory.test-worker-hooks")] = new URL("./worker-hooks.js", import.meta.url).href;

export const CHANNEL = "metis-memory-test-hooks";
/** ctl[0]: the hand-off's state; ctl[1]: filesystem hooks on; ctl[2]: instances made;
 * ctl[3]: counting instances; ctl[4]: bytes of JSON in `data`. */
export const [IDLE, REQUEST, CALL, CALLED, DONE] = [0, 1, 2, 3, 4];
const sab = new SharedArrayBuffer(64 + (4 << 20));
const ctl = new Int32Array(sab, 0, 16);
const data = new Uint8Array(sab, 64);

/** A descriptor of the worker's, as the test's function is shown it: `of` says whose,
 * preview2-shim's ("shim"), pinned-filesystem.js's ("pinned"), or a directory listing's
 * ("stream"). */
export class RemoteDescriptor {
  constructor(of) {
    this.of = of;
  }
}

export function writeData(value) {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  data.set(bytes);
  Atomics.store(ctl, 4, bytes.length);
}

export function readData() {
  return JSON.parse(new TextDecoder().decode(data.slice(0, Atomics.load(ctl, 4))));
}

/** A value as JSON can carry it (worker-hooks.js encodes, this decodes). */
export function decodeArg(arg) {
  if (arg && typeof arg === "object") {
    if (arg.$descriptor) return new RemoteDescriptor(arg.$descriptor);
    if (arg.$bytes !== undefined) return new Uint8Array(arg.$bytes);
    if (arg.$bigint !== undefined) return BigInt(arg.$bigint);
    if (arg.$undefined) return undefined;
    return Object.fromEntries(Object.entries(arg).map(([k, v]) => [k, decodeArg(v)]));
  }
  return arg;
}

export function encodeError(e) {
  if (typeof e === "string") return { string: e };
  return { message: e?.message ?? String(e) };
}

function decodeError(e) {
  return e.string !== undefined ? e.string : new Error(e.message);
}

let around;

/** Handles the worker's hooked call now in `data` (state REQUEST). */
function serve() {
  const { on, name, args } = readData();
  const decoded = args.map(decodeArg);
  let callError;
  let called = false;
  const call = () => {
    called = true;
    Atomics.store(ctl, 0, CALL);
    Atomics.notify(ctl, 0);
    waitForCalled();
    const { error } = readData();
    if (error) {
      callError = decodeError(error);
      throw callError;
    }
    return undefined;
  };
  let outcome;
  try {
    // The resource the call was made on is `this`, as it is for the wrapped method.
    around.call(decodeArg(on), name, decoded, call);
    outcome = { returned: true, called };
  } catch (e) {
    outcome = e === callError && callError !== undefined ? { rethrown: true } : { error: encodeError(e) };
  }
  writeData(outcome);
  Atomics.store(ctl, 0, DONE);
  Atomics.notify(ctl, 0);
}

/** Waits for the worker's real call to end (state CALLED), serving the hooked calls it
 * makes meanwhile (one filesystem call made inside another). */
function waitForCalled() {
  for (;;) {
    const now = Atomics.load(ctl, 0);
    if (now === CALLED) return;
    if (now === REQUEST) serve();
    else Atomics.wait(ctl, 0, now);
  }
}

// The test's thread only (worker-hooks.js imports this module's constants).
if (isMainThread) {
  const channel = new BroadcastChannel(CHANNEL);
  channel.onmessage = ({ data: message }) => {
    if (message?.hello) channel.postMessage({ sab });
    else if (message?.request && Atomics.load(ctl, 0) === REQUEST && around) serve();
  };
  channel.unref();
}

/** Runs `f` with the worker's filesystem calls handed to `around(name, args, call)`. */
export async function withWorkerHook(aroundCall, f) {
  around = aroundCall;
  Atomics.store(ctl, 1, 1);
  try {
    return await f();
  } finally {
    Atomics.store(ctl, 1, 0);
    around = undefined;
  }
}

/** Runs `f`, returning how many guest instances the worker made meanwhile. */
export async function countingInstances(f) {
  Atomics.store(ctl, 2, 0);
  Atomics.store(ctl, 3, 1);
  try {
    const value = await f();
    return { value, made: Atomics.load(ctl, 2) };
  } finally {
    Atomics.store(ctl, 3, 0);
  }
}
