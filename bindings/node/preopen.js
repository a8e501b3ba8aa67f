// `.metis` opened once, as a directory descriptor, and pre-opened as exactly the
// directory opened; and whether this user may use it at all.
//
// preview2-shim pre-opens a path and resolves it again on every call, so a `.metis`
// checked a moment ago may be a link to another directory by the time a call reaches it
// (a process swapping the two in a loop had Node reads return another directory's
// USER.md, and writes leave lock files there). So `.metis` is opened here, as the Rust and
// Python hosts open it (host/src/opened.rs): O_RDONLY | O_DIRECTORY | O_NONBLOCK, and
// O_NOFOLLOW unless the workspace follows a link on purpose (`followMetisLink`). What was
// opened is checked on the descriptor (fstat: a directory, its device and inode), and the
// instance is given that descriptor, through pinned-filesystem.js, which reaches every
// name as `/proc/self/fd/N/name`: Linux takes `/proc/self/fd/N` to the open directory
// itself, not to a path (`/proc/self` is the process; its descriptor table is the one
// every Node thread shares). Pre-opening `/proc/self/fd/N` through the shim would not do:
// the shim's `realpathSync` turns it back into the directory's current path on every
// call, and the race is the same. The descriptor stays open for as long as the instance
// that uses it lives: a write's for its call, the kept reading instance's until it is
// dropped (index.js closes it then); one collected unclosed is closed by a finalizer.
//
// Where no path reaches an open directory (not Linux, or no /proc mounted, or one that
// does not show this process's descriptors), the instance is given the path, through the
// shim's own pre-open, as before: the checks still run on the opened descriptor, but a
// link swapped in at `.metis` after them is what the calls made meanwhile reach (on Linux
// a process warning says so, once). On Windows nothing is opened (Node cannot open a
// directory there): the path is stat'ed.
//
// Before a workspace's `.metis/` is used for any read or write (and before a write creates
// one), git's `safe.directory` reasoning: a `.metis` another user owns may hold entries
// they wrote into this agent's prompt, and receives what the agent adds; a workspace root
// every user can write (with no sticky bit) lets any of them replace `.metis` in it. So
// `.metis` must belong to the effective uid, and the root must not be writable by others
// unless sticky (group-writable is allowed), or the call fails, changing nothing, unless
// the workspace trusts it (`trustForeignMetis`). Not on Windows, which has no uids or
// mode bits to judge by.
//
// With global user memory on (global-user.js), the user's own `.metis/` is opened here
// too and pre-opened beside the workspace's, at guest path `global-metis`, as the Rust
// host does: through a link if it is one (the person's own dotfiles may keep it
// elsewhere), the descriptor then being the directory the link led to when opened, but
// only a link this user made (`linkDistrust`), in a parent not writable by every user
// unless sticky (`rootDistrust`, as for a workspace root), and then the owner check
// (`ownerDistrust`: theirs, not writable by every user). An instance gets one filesystem
// for all its pre-opens (`sandboxFilesystem`).

import fs from "node:fs";
import { checkedFilesystem } from "./os-errors.js";
import { pinnedFilesystem } from "./pinned-filesystem.js";
import { readOnly, readOnlyFilesystem } from "./read-only.js";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const WINDOWS = process.platform === "win32";
const readOnlyPinned = readOnly(pinnedFilesystem);

/** Closes the descriptor of an OpenedDir collected without being closed. */
const closer = new FinalizationRegistry((fd) => {
  try {
    fs.closeSync(fd);
  } catch {}
});

/** Which directory `stat` is (device and inode; undefined for none): a kept instance is
 * only used on the `.metis/` it was made for. */
export function directoryId(stat) {
  return stat && `${stat.dev}:${stat.ino}`;
}

/** A path that reaches exactly the open directory `fd` (whose status is `stat`), if this
 * system has one: `/proc/self/fd/N`, when a name looked up through it is looked up in
 * that directory. On Linux without one, says so once (a process warning). */
function descriptorPath(fd, stat) {
  if (process.platform !== "linux") return undefined;
  const reach = `/proc/self/fd/${fd}`;
  try {
    if (directoryId(fs.statSync(`${reach}/.`, { bigint: true })) === directoryId(stat)) return reach;
  } catch {}
  if (!warned) {
    warned = true;
    process.emitWarning(
      "/proc/self/fd does not reach open directories here, so each workspace's .metis/ is pre-opened by its path: a .metis swapped for a symbolic link while a call runs may be followed",
      { code: "METIS_MEMORY_PREOPEN_BY_PATH" },
    );
  }
  return undefined;
}

let warned = false;

/** A `.metis/` (the workspace's, or the user's own) opened for the instances of one call,
 * or of the kept reading instance. */
export class OpenedDir {
  #fd;
  /** The path it was opened by. */
  path;
  /** Its device and inode (`directoryId`). */
  id;
  /** Whether the instance is given the open directory itself (pinned-filesystem.js), not
   * the path. */
  pinned;

  constructor(fd, path, stat) {
    this.#fd = fd;
    this.path = path;
    this.id = directoryId(stat);
    this.pinned = fd >= 0 && descriptorPath(fd, stat) !== undefined;
    if (fd >= 0) closer.register(this, fd, this);
  }

  /** The open descriptor; -1 once closed (or where none is opened: Windows). */
  get fd() {
    return this.#fd;
  }

  /** Its status now: fstat of the descriptor (stat of the path where none is open). */
  stat() {
    return this.#fd >= 0 ? fs.fstatSync(this.#fd) : fs.statSync(this.path);
  }

  close() {
    if (this.#fd < 0) return;
    closer.unregister(this);
    const fd = this.#fd;
    this.#fd = -1;
    fs.closeSync(fd);
  }
}

/** `dir` opened as a directory, never through a symbolic link unless `followLink`.
 * Throws Node's error when it cannot be (ENOENT, ELOOP for a link, ENOTDIR, …). */
export function openDirectory(dir, followLink) {
  if (WINDOWS) return new OpenedDir(-1, dir, fs.statSync(dir, { bigint: true }));
  const flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | (followLink ? 0 : O_NOFOLLOW);
  const fd = fs.openSync(dir, flags);
  try {
    const stat = fs.fstatSync(fd, { bigint: true });
    if (!stat.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, open '${dir}'`), { code: "ENOTDIR" });
    return new OpenedDir(fd, dir, stat);
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/** What an instance that sees the directories `dirs` (a guest path → OpenedDir map; an
 * undefined value pre-opens nothing there) is given: its `filesystem`, and the
 * `preopens` for `WASIShim`'s sandbox. The open directories themselves when every one
 * of them is reached by its descriptor (pinned-filesystem.js), else every path through
 * the shim: one filesystem serves all of an instance's pre-opens. */
export function sandboxFilesystem(dirs, readOnlyAccess) {
  const opened = Object.entries(dirs).filter(([, dir]) => dir !== undefined);
  if (opened.length > 0 && opened.every(([, dir]) => dir.pinned)) {
    return {
      filesystem: readOnlyAccess ? readOnlyPinned : pinnedFilesystem,
      preopens: Object.fromEntries(opened),
    };
  }
  return {
    filesystem: readOnlyAccess ? readOnlyFilesystem : checkedFilesystem,
    preopens: Object.fromEntries(opened.map(([guestPath, dir]) => [guestPath, dir.path])),
  };
}

const TRUST_HINT = "(if you trust it, pass { trustForeignMetis: true } to openWorkspace)";

/** What a refusal of the user's own `.metis/` (global user memory) says to do: it reaches
 * every workspace's prompt, so no opt-in reaches it. */
export const OWN_MEMORY_HINT =
  "(it is your own memory, which { trustForeignMetis: true } does not reach: make it yours and private (chown, chmod 700), or give globalUser another dir)";

/** Why `root` must not hold a `.metis/` this user uses, or undefined when it may; the
 * reason ends with `hint`, what to do. */
export function rootDistrust(root, hint = TRUST_HINT) {
  if (WINDOWS) return undefined;
  const mode = fs.statSync(root).mode;
  if (mode & 0o002 && !(mode & 0o1000)) {
    return `${root} can be written by every user and has no sticky bit, so another user could replace .metis/ in it: it is not used ${hint}`;
  }
  return undefined;
}

/** Why `opened` (the `.metis/` at `metisDir` in `root`) must not be used by this user, or
 * undefined when it may: another user's, or in a root every user can write. */
export function metisDistrust(opened, root, metisDir) {
  return ownerDistrust(opened, metisDir) ?? rootDistrust(root);
}

/** Why `opened` (the directory at `dir`) must not be used by this user, or undefined when
 * it may: another user's, or one every user can write, as the Rust host's `check_owner`.
 * The user's own `.metis/` (global user memory) is asked this, after `linkDistrust` and
 * `rootDistrust` of its parent. */
export function ownerDistrust(opened, dir, hint = TRUST_HINT) {
  if (WINDOWS || typeof process.geteuid !== "function") return undefined;
  const euid = process.geteuid();
  const { uid, mode } = opened.stat();
  if (uid !== euid) {
    return `${dir} belongs to uid ${uid}, not to this user (uid ${euid}): another user could put entries into this agent's prompt and read what it adds, so it is not used ${hint}`;
  }
  // Sticky or not: another user may still create a file that is missing in it.
  if (Number(mode) & 0o002) {
    return `${dir} can be written by every user, so another user could put entries into this agent's prompt: it is not used ${hint}`;
  }
  return undefined;
}

/** Why the symbolic link at `dir` (the user's own `.metis/`) must not be followed by this
 * user, or undefined when it may (or is no link): another user made it, and could lead it
 * anywhere, as the Rust host's `check_link_owner`. */
export function linkDistrust(dir, hint = TRUST_HINT) {
  if (WINDOWS || typeof process.geteuid !== "function") return undefined;
  let stat;
  try {
    stat = fs.lstatSync(dir);
  } catch {
    return undefined;
  }
  const euid = process.geteuid();
  if (stat.isSymbolicLink() && stat.uid !== euid) {
    return `${dir} is a symbolic link made by uid ${stat.uid}, not by this user (uid ${euid}): another user could lead it anywhere, so it is not used ${hint}`;
  }
  return undefined;
}
