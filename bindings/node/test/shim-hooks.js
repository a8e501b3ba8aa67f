// Wraps the methods of the package's filesystem resources, to record each WASI filesystem
// call the guest makes and what the filesystem answered, or to make one of them throw (a
// trap, as a host bug would): preview2-shim's (the same module instance the installed
// package runs on), which serve a `.metis/` pre-opened by path, and the installed
// package's pinned-filesystem.js's, which serve one pre-opened as an open directory (on
// Linux, preopen.js). The guests run on the package's worker thread, so the methods are
// wrapped there (worker-hooks.js) and each call is handed to this thread, where `around`
// runs as it would beside the guest, the worker waiting (hook-channel.js); the methods of
// this thread's own resources are wrapped too, for anything run here.

import { filesystem } from "@bytecodealliance/preview2-shim";
import { RemoteDescriptor, withWorkerHook } from "./hook-channel.js";

const pinned = (await import(new URL("./pinned-filesystem.js", import.meta.resolve("metis-memory")).href)).pinnedFilesystem.types;

const prototypes = [
  filesystem.types.Descriptor.prototype,
  filesystem.types.DirectoryEntryStream.prototype,
  pinned.Descriptor.prototype,
  pinned.DirectoryEntryStream.prototype,
];

function describe(arg) {
  if (typeof arg === "string") return JSON.stringify(arg);
  if (arg instanceof Uint8Array) return `<${arg.length} bytes>`;
  if (arg instanceof filesystem.types.Descriptor || arg instanceof pinned.Descriptor || arg instanceof RemoteDescriptor) return "<descriptor>";
  if (arg && typeof arg === "object") {
    const on = Object.entries(arg).filter(([, v]) => v === true).map(([k]) => k);
    return `{${on.join(",")}}`;
  }
  return String(arg);
}

/** Runs `f` with every filesystem method wrapped by `around(name, args, call)`; restores
 * them afterwards. */
export async function withHook(around, f) {
  const saved = [];
  for (const proto of prototypes) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const original = proto[name];
      if (name === "constructor" || typeof original !== "function") continue;
      saved.push([proto, name, original]);
      proto[name] = function (...args) {
        return around(name, args, () => original.apply(this, args));
      };
    }
  }
  try {
    return await withWorkerHook(around, f);
  } finally {
    for (const [proto, name, original] of saved) proto[name] = original;
  }
}

/** Runs `f`, returning its value and the calls made: `{name, args, error}` each, `error`
 * being the WASI error code a call was answered with (undefined when it succeeded). */
export async function traced(f) {
  const calls = [];
  const value = await withHook(
    (name, args, call) => {
      const record = { name, args: args.map(describe), error: undefined };
      calls.push(record);
      try {
        return call();
      } catch (e) {
        record.error = typeof e === "string" ? e : `threw ${e?.message ?? e}`;
        throw e;
      }
    },
    f,
  );
  return { value, calls };
}

export function show(calls) {
  return calls
    .map((c) => `${c.name}(${c.args.join(", ")}) -> ${c.error ?? "ok"}`)
    .join("\n");
}
