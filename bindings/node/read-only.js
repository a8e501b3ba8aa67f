// A read-only pre-open for preview2-shim, which has none: what wasmtime's
// `FsPerms::ReadOnly` is to the Rust host. Each descriptor wraps one of the shim's (or of
// pinned-filesystem.js's) and passes every call through, except those that would change
// something on disk, which it answers with the WASI error `read-only` without reaching
// the descriptor it wraps. The component decides what a refused write means (an `io`
// store error naming what it could not do and why); this file only refuses.
//
// Given to `WASIShim` as an application-provided filesystem (`createPreopens`), around
// the shim's own or pinned-filesystem.js's (`readOnly`); the component checks every
// descriptor it is handed against `types.Descriptor`, this class.

import { filesystem } from "@bytecodealliance/preview2-shim";

const shim = filesystem.types;
const dispose = Symbol.dispose ?? Symbol.for("dispose");

/** The WASI error code a refused call throws. */
const REFUSED = "read-only";

export class ReadOnlyDescriptor {
  #inner;

  constructor(inner) {
    this.#inner = inner;
  }

  // Reads: passed through.

  openAt(pathFlags, path, openFlags, descriptorFlags) {
    if (openFlags.create || openFlags.truncate || descriptorFlags.write || descriptorFlags.mutateDirectory) {
      throw REFUSED;
    }
    return new ReadOnlyDescriptor(this.#inner.openAt(pathFlags, path, openFlags, descriptorFlags));
  }
  readViaStream(offset) {
    return this.#inner.readViaStream(offset);
  }
  read(length, offset) {
    return this.#inner.read(length, offset);
  }
  readDirectory() {
    return this.#inner.readDirectory();
  }
  readlinkAt(path) {
    return this.#inner.readlinkAt(path);
  }
  stat() {
    return this.#inner.stat();
  }
  statAt(pathFlags, path) {
    return this.#inner.statAt(pathFlags, path);
  }
  getType() {
    return this.#inner.getType();
  }
  getFlags() {
    return this.#inner.getFlags();
  }
  metadataHash() {
    return this.#inner.metadataHash();
  }
  metadataHashAt(pathFlags, path) {
    return this.#inner.metadataHashAt(pathFlags, path);
  }
  advise(offset, length, advice) {
    return this.#inner.advise(offset, length, advice);
  }
  // Syncing changes nothing (and a read-only descriptor has nothing pending).
  sync() {
    return this.#inner.sync();
  }
  syncData() {
    return this.#inner.syncData();
  }
  isSameObject(other) {
    return other instanceof ReadOnlyDescriptor && this.#inner.isSameObject(other.#inner);
  }
  [dispose]() {
    this.#inner[dispose]?.();
  }

  // Writes: refused before they reach the shim.

  write() {
    throw REFUSED;
  }
  writeViaStream() {
    throw REFUSED;
  }
  appendViaStream() {
    throw REFUSED;
  }
  setSize() {
    throw REFUSED;
  }
  setTimes() {
    throw REFUSED;
  }
  setTimesAt() {
    throw REFUSED;
  }
  createDirectoryAt() {
    throw REFUSED;
  }
  linkAt() {
    throw REFUSED;
  }
  renameAt() {
    throw REFUSED;
  }
  symlinkAt() {
    throw REFUSED;
  }
  unlinkFileAt() {
    throw REFUSED;
  }
  removeDirectoryAt() {
    throw REFUSED;
  }
}

/** `base` (a filesystem for `WASIShim`: `types` and `createPreopens`) with each of its
 * pre-opens wrapped read-only. */
export function readOnly(base) {
  return Object.freeze({
    types: Object.freeze({ ...base.types, Descriptor: ReadOnlyDescriptor }),
    createPreopens(preopens) {
      const entries = base
        .createPreopens(preopens)
        .getDirectories()
        .map(([descriptor, guestPath]) => [new ReadOnlyDescriptor(descriptor), guestPath]);
      return { getDirectories: () => [...entries] };
    },
  });
}

/** The filesystem a read-only instance is given where `.metis/` is pre-opened by path
 * (preopen.js): the shim's own, its pre-opens wrapped. */
export const readOnlyFilesystem = readOnly({
  types: shim,
  createPreopens: (preopens) => filesystem.createFilesystem({ preopens }).preopens,
});
