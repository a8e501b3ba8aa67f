// preview2-shim turns most failed filesystem calls into WASI error codes, but not all:
// EFBIG (a file-size limit), ENOSPC, EDQUOT and EROFS reach the guest as JavaScript
// exceptions, which the component can only take as a trap. Each descriptor here wraps
// one of the shim's and passes every call through, turning those four into the WASI codes
// wasmtime gives for them, so the component decides what they mean (`file-too-large`,
// `insufficient-space`, `read-only` store errors) as under every other host. Nothing is
// decided here.
//
// Given to `WASIShim` as an application-provided filesystem (`createPreopens`), as
// read-only.js is; the component checks every descriptor it is handed against
// `types.Descriptor`, this class.

import { filesystem } from "@bytecodealliance/preview2-shim";

const shim = filesystem.types;
const dispose = Symbol.dispose ?? Symbol.for("dispose");

/** Node's error codes the shim leaves unconverted, and the WASI codes they are. */
const WASI_CODES = Object.freeze({
  EFBIG: "file-too-large",
  ENOSPC: "insufficient-space",
  EDQUOT: "quota",
  EROFS: "read-only",
});

const inner = new WeakMap();

/** A shim descriptor whose calls throw WASI codes for the errors in WASI_CODES. */
export class CheckedDescriptor {
  constructor(wrapped) {
    inner.set(this, wrapped);
  }

  [dispose]() {
    inner.get(this)[dispose]?.();
  }
}

function unwrap(value) {
  return value instanceof CheckedDescriptor ? inner.get(value) : value;
}

for (const name of Object.getOwnPropertyNames(shim.Descriptor.prototype)) {
  if (name === "constructor" || typeof shim.Descriptor.prototype[name] !== "function") continue;
  CheckedDescriptor.prototype[name] = function (...args) {
    let result;
    try {
      result = inner.get(this)[name](...args.map(unwrap));
    } catch (e) {
      throw WASI_CODES[e?.code] ?? e;
    }
    return result instanceof shim.Descriptor ? new CheckedDescriptor(result) : result;
  };
}

/** The filesystem a writable instance is given: the shim's own, its pre-opens wrapped. */
export const checkedFilesystem = Object.freeze({
  types: Object.freeze({ ...shim, Descriptor: CheckedDescriptor }),
  createPreopens(preopens) {
    const entries = filesystem
      .createFilesystem({ preopens })
      .preopens.getDirectories()
      .map(([descriptor, guestPath]) => [new CheckedDescriptor(descriptor), guestPath]);
    return { getDirectories: () => [...entries] };
  },
});
