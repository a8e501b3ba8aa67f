// A WASI filesystem for `WASIShim` that resolves every name under a directory already
// open, never under the directory's path.
//
// preview2-shim keeps a pre-open as a host path and resolves it again on every call: its
// `#getFullPath` takes `realpathSync(preopen)`, then joins the guest's name to the string
// that returns and opens, stats, links or renames by that string. Whatever the pre-open
// was when it was checked, each call reaches what the path leads to at that moment: a
// `.metis` swapped for a symbolic link between two calls, or within one, is followed, and
// so would `/proc/self/fd/N` be, since `realpathSync` turns it back into the directory's
// current path before anything is opened.
//
// Here a directory descriptor is an open descriptor of the directory, and a name in it is
// reached as `/proc/self/fd/N/name`: Linux takes `/proc/self/fd/N` to the open directory
// itself (not to any path), so the name is looked up in exactly the directory opened,
// wherever it has been moved and whatever now stands at its old path. Files are opened
// once and then used by descriptor, as the shim uses them. Nothing is followed: every
// open adds O_NOFOLLOW, every stat is an lstat, whatever the path flags ask (the component
// never asks to follow, `guest/src/fs.rs`); and a name is a single entry of the
// directory (or `.`): a path with a `/` or a `..` is refused (`not-permitted`), so nothing
// outside the pre-opened directory can be named at all.
//
// Only Linux has such a path (preopen.js says whether this one does, and falls back to
// the shim's pre-open by path where it does not). The calls the component imports
// (`gen/metis_memory.js`: open-at, stat-at, stat, read, write, sync, get-type, link-at,
// rename-at, unlink-file-at, read-directory) are implemented, and a few more that cost a
// line; streams and times are not (`unsupported`). Node's error codes become WASI's as
// the shim converts them, EFBIG, ENOSPC, EDQUOT and EROFS included (os-errors.js says why).
//
// Given to `WASIShim` as an application-provided filesystem (`createPreopens`, each
// pre-open an object whose `fd` is the open directory, kept open by its owner for as long
// as the instance lives, and -1 once closed); the component checks every descriptor it is
// handed against `types.Descriptor`, this module's class. An instance has one pre-open
// (`.metis`) or, with global user memory on, two (`.metis` and `global-metis`, the user's
// own `.metis/`, preopen.js): each is its own open directory, and a name the guest gives
// is looked up in the one it names it in, never in the other.

import fs from "node:fs";

const dispose = Symbol.dispose ?? Symbol.for("dispose");
const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** The most bytes one `read` allocates; a shorter read is the caller's to continue. */
const MAX_READ = 16 << 20;

/** Node's error codes and the WASI codes they are (preview2-shim's table, and
 * os-errors.js's four). Any other error is thrown as it is: a trap, as under the shim. */
const WASI_CODES = Object.freeze({
  EACCES: "access",
  EAGAIN: "would-block",
  EWOULDBLOCK: "would-block",
  EALREADY: "already",
  EBADF: "bad-descriptor",
  EBUSY: "busy",
  EDEADLK: "deadlock",
  EDQUOT: "quota",
  EEXIST: "exist",
  EFBIG: "file-too-large",
  EILSEQ: "illegal-byte-sequence",
  EINPROGRESS: "in-progress",
  EINTR: "interrupted",
  EINVAL: "invalid",
  EIO: "io",
  EISDIR: "is-directory",
  ELOOP: "loop",
  EMLINK: "too-many-links",
  EMSGSIZE: "message-size",
  ENAMETOOLONG: "name-too-long",
  ENODEV: "no-device",
  ENOENT: "no-entry",
  ENOLCK: "no-lock",
  ENOMEM: "insufficient-memory",
  ENOSPC: "insufficient-space",
  ENOTDIR: "not-directory",
  ENOTEMPTY: "not-empty",
  ENOTRECOVERABLE: "not-recoverable",
  ENOTSUP: "unsupported",
  EOPNOTSUPP: "unsupported",
  ENOTTY: "no-tty",
  ENXIO: "no-such-device",
  EOVERFLOW: "overflow",
  EPERM: "not-permitted",
  EPIPE: "pipe",
  EROFS: "read-only",
  ESPIPE: "invalid-seek",
  ETXTBSY: "text-file-busy",
  EXDEV: "cross-device",
});

/** Runs `f`, throwing the WASI code of the Node error it throws. */
function wasi(f) {
  try {
    return f();
  } catch (e) {
    const code = Object.hasOwn(WASI_CODES, e?.code) ? WASI_CODES[e.code] : undefined;
    throw code ?? e;
  }
}

/** `name` if it is one entry of a directory (or `.`), else the WASI refusal. */
function entry(name) {
  if (name === "") throw "no-entry";
  if (name.includes("\0")) throw "invalid";
  if (name === ".." || name.includes("/")) throw "not-permitted";
  return name;
}

function type(stats) {
  if (stats.isFile()) return "regular-file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symbolic-link";
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice()) return "character-device";
  if (stats.isBlockDevice()) return "block-device";
  return "unknown";
}

const NANOS = 1_000_000_000n;

function timestamp(ns) {
  return { seconds: ns / NANOS, nanoseconds: Number(ns % NANOS) };
}

/** A bigint `fs.Stats` as WASI's `descriptor-stat`. */
function descriptorStat(stats) {
  return {
    type: type(stats),
    linkCount: stats.nlink,
    size: stats.size,
    dataAccessTimestamp: timestamp(stats.atimeNs),
    dataModificationTimestamp: timestamp(stats.mtimeNs),
    statusChangeTimestamp: timestamp(stats.ctimeNs),
  };
}

/** Closes the descriptors of those the guest never dropped (an instance that trapped). */
const closer = new FinalizationRegistry((fd) => {
  try {
    fs.closeSync(fd);
  } catch {}
});

/** Only this module makes descriptors. */
const MAKE = Symbol("make");

export class Descriptor {
  /** The descriptor this one owns (-1 once closed), or undefined for a pre-open. */
  #fd;
  /** A pre-open's directory, whose owner keeps `fd` open (and sets it to -1 on close). */
  #preopen;
  #directory;
  #flags;

  constructor(make, { fd, preopen, directory, flags }) {
    if (make !== MAKE) throw new TypeError("Illegal constructor");
    this.#fd = fd;
    this.#preopen = preopen;
    this.#directory = directory;
    this.#flags = flags;
    if (fd !== undefined) closer.register(this, fd, this);
  }

  /** The open descriptor (the WASI error `bad-descriptor` once closed). */
  #open() {
    const fd = this.#preopen ? this.#preopen.fd : this.#fd;
    if (!Number.isInteger(fd) || fd < 0) throw "bad-descriptor";
    return fd;
  }

  /** The path that reaches `name` in this directory, and only there. */
  #at(name) {
    if (!this.#directory) throw "not-directory";
    return `/proc/self/fd/${this.#open()}/${entry(name)}`;
  }

  [dispose]() {
    // A pre-open's directory is its owner's to close; the guest drops the pre-open each
    // time it is done with the list `get-directories` returned.
    if (this.#fd === undefined || this.#fd < 0) return;
    closer.unregister(this);
    const fd = this.#fd;
    this.#fd = -1;
    try {
      fs.closeSync(fd);
    } catch {}
  }

  openAt(pathFlags, path, openFlags, descriptorFlags) {
    const at = this.#at(path);
    // As preview2-shim: none of these is supported (the component asks for none).
    if (
      descriptorFlags.requestedWriteSync ||
      descriptorFlags.mutateDirectory ||
      descriptorFlags.fileIntegritySync ||
      descriptorFlags.dataIntegritySync
    ) {
      throw "unsupported";
    }
    // Never through a link; never waiting on a FIFO swapped in after the guest's stat.
    let flags = O_NOFOLLOW | O_NONBLOCK;
    if (openFlags.create) flags |= O_CREAT;
    if (openFlags.directory) flags |= O_DIRECTORY;
    if (openFlags.exclusive) flags |= O_EXCL;
    if (openFlags.truncate) flags |= O_TRUNC;
    if (descriptorFlags.read && descriptorFlags.write) flags |= O_RDWR;
    else if (descriptorFlags.write) flags |= O_WRONLY;
    else flags |= O_RDONLY;
    const fd = wasi(() => fs.openSync(at, flags));
    let stats;
    try {
      stats = wasi(() => fs.fstatSync(fd));
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
    return new Descriptor(MAKE, { fd, directory: stats.isDirectory(), flags: { ...descriptorFlags } });
  }

  statAt(pathFlags, path) {
    const at = this.#at(path);
    return descriptorStat(wasi(() => fs.lstatSync(at, { bigint: true })));
  }

  stat() {
    const fd = this.#open();
    return descriptorStat(wasi(() => fs.fstatSync(fd, { bigint: true })));
  }

  getType() {
    const fd = this.#open();
    return type(wasi(() => fs.fstatSync(fd)));
  }

  getFlags() {
    return this.#preopen ? { read: true, mutateDirectory: true } : { ...this.#flags };
  }

  read(length, offset) {
    const fd = this.#open();
    const buffer = new Uint8Array(Math.min(Number(length), MAX_READ));
    const n = wasi(() => fs.readSync(fd, buffer, 0, buffer.length, Number(offset)));
    return [buffer.subarray(0, n), n === 0];
  }

  write(buffer, offset) {
    const fd = this.#open();
    return BigInt(wasi(() => fs.writeSync(fd, buffer, 0, buffer.byteLength, Number(offset))));
  }

  setSize(size) {
    const fd = this.#open();
    wasi(() => fs.ftruncateSync(fd, Number(size)));
  }

  sync() {
    const fd = this.#open();
    wasi(() => fs.fsyncSync(fd));
  }

  syncData() {
    const fd = this.#open();
    wasi(() => fs.fdatasyncSync(fd));
  }

  advise() {}

  readDirectory() {
    // Read whole (`.metis/` holds a handful of entries), so no directory handle is left
    // for the guest to drop.
    const at = this.#at(".");
    const entries = wasi(() => fs.readdirSync(at, { withFileTypes: true }));
    return new DirectoryEntryStream(
      MAKE,
      entries.map((dirent) => ({ name: dirent.name, type: type(dirent) })),
    );
  }

  linkAt(oldPathFlags, oldPath, newDescriptor, newPath) {
    const from = this.#at(oldPath);
    const to = descriptor(newDescriptor).#at(newPath);
    // link(2) never follows a link at `from`.
    wasi(() => fs.linkSync(from, to));
  }

  renameAt(oldPath, newDescriptor, newPath) {
    const from = this.#at(oldPath);
    const to = descriptor(newDescriptor).#at(newPath);
    wasi(() => fs.renameSync(from, to));
  }

  unlinkFileAt(path) {
    const at = this.#at(path);
    wasi(() => fs.unlinkSync(at));
  }

  createDirectoryAt(path) {
    const at = this.#at(path);
    wasi(() => fs.mkdirSync(at));
  }

  removeDirectoryAt(path) {
    const at = this.#at(path);
    wasi(() => fs.rmdirSync(at));
  }

  readlinkAt(path) {
    const at = this.#at(path);
    return wasi(() => fs.readlinkSync(at));
  }

  isSameObject(other) {
    if (!(other instanceof Descriptor)) return false;
    const [a, b] = [this.metadataHash(), other.metadataHash()];
    return a.upper === b.upper && a.lower === b.lower;
  }

  metadataHash() {
    const fd = this.#open();
    const stats = wasi(() => fs.fstatSync(fd, { bigint: true }));
    return { upper: stats.dev, lower: stats.ino };
  }

  metadataHashAt(pathFlags, path) {
    const at = this.#at(path);
    const stats = wasi(() => fs.lstatSync(at, { bigint: true }));
    return { upper: stats.dev, lower: stats.ino };
  }

  readViaStream() {
    throw "unsupported";
  }

  writeViaStream() {
    throw "unsupported";
  }

  appendViaStream() {
    throw "unsupported";
  }

  setTimes() {
    throw "unsupported";
  }

  setTimesAt() {
    throw "unsupported";
  }

  symlinkAt() {
    throw "unsupported";
  }
}

/** `d` as a descriptor of this module (`bad-descriptor` for any other). */
function descriptor(d) {
  if (!(d instanceof Descriptor)) throw "bad-descriptor";
  return d;
}

export class DirectoryEntryStream {
  #entries;
  #next = 0;

  constructor(make, entries) {
    if (make !== MAKE) throw new TypeError("Illegal constructor");
    this.#entries = entries;
  }

  readDirectoryEntry() {
    return this.#entries[this.#next++];
  }

  [dispose]() {}
}

/** The filesystem an instance is given (`new WASIShim({ filesystem, sandbox: { preopens }
 * })`), each pre-open an open directory (`{ fd }`, kept open by its owner). */
export const pinnedFilesystem = Object.freeze({
  types: Object.freeze({
    Descriptor,
    DirectoryEntryStream,
    filesystemErrorCode() {
      return undefined;
    },
  }),
  createPreopens(preopens) {
    const entries = Object.entries(preopens).map(([guestPath, preopen]) => [
      new Descriptor(MAKE, { preopen, directory: true }),
      guestPath,
    ]);
    return { getDirectories: () => [...entries] };
  },
});
