// A test helper, imported by the package's worker thread (worker.js) when
// the test's thread names it (hook-channel.js does): wraps the methods of the
// filesystem resources there (preview2-shim's, and the package's pinned-filesystem.js's)
// and counts the guest instances made there, each only while the test's thread has
// turned it on; a wrapped call is handed to the test's thread (hook-channel.js), which
// runs the test's function for it, while this thread waits.

import { BroadcastChannel } from "node:worker_threads";
import { filesystem } from "@bytecodealliance/preview2-shim";
import { CHANNEL, IDLE, REQUEST, CALL, CALLED, DONE } from "./hook-channel.js";

const pinned = (await import(new URL("./pinned-filesystem.js", import.meta.resolve("metis-memory")).href)).pinnedFilesystem.types;

const channel = new BroadcastChannel(CHANNEL);
const sab = await new Promise((resolve) => {
  channel.onmessage = ({ data }) => {
    if (data?.sab) resolve(data.sab);
  };
  channel.postMessage({ hello: true });
});
channel.onmessage = null;
channel.unref();
const ctl = new Int32Array(sab, 0, 16);
const data = new Uint8Array(sab, 64);

function writeData(value) {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  data.set(bytes);
  Atomics.store(ctl, 4, bytes.length);
}

function readData() {
  return JSON.parse(new TextDecoder().decode(data.slice(0, Atomics.load(ctl, 4))));
}

function set(state) {
  Atomics.store(ctl, 0, state);
  Atomics.notify(ctl, 0);
}


function encodeArg(arg) {
  if (arg === undefined) return { $undefined: true };
  if (typeof arg === "bigint") return { $bigint: String(arg) };
  if (arg instanceof Uint8Array) return { $bytes: arg.length };
  if (arg instanceof filesystem.types.Descriptor) return { $descriptor: "shim" };
  if (arg instanceof pinned.Descriptor) return { $descriptor: "pinned" };
  if (arg instanceof filesystem.types.DirectoryEntryStream || arg instanceof pinned.DirectoryEntryStream) return { $descriptor: "stream" };
  if (arg && typeof arg === "object") return Object.fromEntries(Object.entries(arg).map(([k, v]) => [k, encodeArg(v)]));
  return arg;
}

function encodeError(e) {
  if (typeof e === "string") return { string: e };
  return { message: e?.message ?? String(e) };
}

let depth = 0;

/** Hands the call `name(args)` to the test's thread; `real()` runs it here when it asks. */
function handOff(on, name, args, real) {
  const top = depth === 0;
  writeData({ on: encodeArg(on), name, args: args.map(encodeArg) });
  set(REQUEST);
  if (top) channel.postMessage({ request: true });
  let value;
  let thrown;
  let threw = false;
  for (;;) {
    const now = Atomics.load(ctl, 0);
    if (now === CALL) {
      depth += 1;
      try {
        value = real();
        threw = false;
        writeData({});
      } catch (e) {
        thrown = e;
        threw = true;
        writeData({ error: encodeError(e) });
      } finally {
        depth -= 1;
      }
      set(CALLED);
    } else if (now === DONE) {
      const outcome = readData();
      // Back to the call this one was made in (its real call still running), or to none.
      set(top ? IDLE : CALL);
      if (outcome.returned) return value;
      if (outcome.rethrown) throw thrown;
      const { error } = outcome;
      throw error.string !== undefined ? error.string : new Error(error.message);
    } else {
      Atomics.wait(ctl, 0, now);
    }
  }
}

for (const proto of [
  filesystem.types.Descriptor.prototype,
  filesystem.types.DirectoryEntryStream.prototype,
  pinned.Descriptor.prototype,
  pinned.DirectoryEntryStream.prototype,
]) {
  for (const name of Object.getOwnPropertyNames(proto)) {
    const original = proto[name];
    if (name === "constructor" || typeof original !== "function") continue;
    proto[name] = function (...args) {
      if (Atomics.load(ctl, 1) !== 1) return original.apply(this, args);
      return handOff(this, name, args, () => original.apply(this, args));
    };
  }
}

const Instance = WebAssembly.Instance;
WebAssembly.Instance = new Proxy(Instance, {
  construct(target, args) {
    const instance = Reflect.construct(target, args);
    if (instance.exports.metis_fuel && Atomics.load(ctl, 3) === 1) Atomics.add(ctl, 2, 1);
    return instance;
  },
});
