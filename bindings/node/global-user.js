// Global user memory: the person's own USER.md, in their own `.metis/` directory
// (`~/.metis/`), which the component composes into every workspace's prompt ahead of the
// workspace's USER.md, with its own cap, lock and audit (`global-user` in
// `wit/types.wit`). Off unless a workspace is opened with `globalUser`. As the Rust host's
// `GlobalUser` (host/src/global_user.rs): where the directory is and whether the agent's
// `USER.md` tool writes go to it, and the directory checked, opened, created and removed
// again. What any of it means is the component's: the workspace only says it is on, and
// who writes it (`settings.global-user`, resource.js), and pre-opens the directory at
// guest path `global-metis` (workspace.js).

import fs from "node:fs";
import path from "node:path";
import { WorkspaceError } from "./errors.js";
import { OWN_MEMORY_HINT, linkDistrust, openDirectory, ownerDistrust, rootDistrust } from "./preopen.js";

/** Where the user's own USER.md is, and whether the agent writes it. */
export class GlobalUser {
  /** The user's own `.metis/` directory, as given: every call refuses a relative one
   * (`checkedDir`). */
  dir;
  /** Whether a tool call's `USER.md` is the user's own file (`true`) or the workspace's. */
  agentWrites;
  /** Both, as the workspace shows them (`Workspace.globalUser`). */
  options;

  constructor(dir, agentWrites) {
    this.dir = dir;
    this.agentWrites = agentWrites;
    this.options = Object.freeze({ dir, agentWrites });
    Object.freeze(this);
  }

  /** Who writes it, as an instance's settings say (`settings.global-user`, a
   * `global-user-mode` of `wit/store.wit`). */
  get access() {
    return this.agentWrites ? "write" : "read";
  }

  /** The directory, if its path is absolute: a relative one (or one starting with an
   * unexpanded `~`, as MCP configurations leave it) would resolve inside whatever
   * directory the program runs in, a repository perhaps, so it is refused. */
  checkedDir() {
    if (path.isAbsolute(this.dir)) return this.dir;
    throw new WorkspaceError(
      `the directory of your own USER.md must be an absolute path, not ${this.dir}: a relative one would be found inside whatever directory this runs in`,
    );
  }

  /** The directory's stat if it exists (through a link), else undefined; an error if
   * something other than a directory is there. */
  existing() {
    const dir = this.checkedDir();
    let stat;
    try {
      stat = fs.statSync(dir, { bigint: true });
    } catch (e) {
      if (e.code === "ENOENT") return undefined;
      throw new WorkspaceError(`cannot access ${this.dir}: ${e.message}`, { cause: e });
    }
    if (!stat.isDirectory()) throw new WorkspaceError(`${this.dir} exists but is not a directory`);
    return stat;
  }

  /** The directory opened for pre-opening (an OpenedDir, which the caller closes), or
   * undefined when there is none. It may be a link (the person's own dotfiles), but the
   * link must be theirs and its parent not writable by every user unless sticky (checked
   * before it is opened), and the directory theirs and not writable by every user,
   * whatever the workspace trusts: `trustForeignMetis` is about a workspace, and whoever
   * controls this directory reaches every workspace's prompt. */
  open() {
    this.checkedDir();
    this.#checkPlace();
    let opened;
    try {
      opened = openDirectory(this.dir, true);
    } catch (e) {
      if (e.code === "ENOENT") return undefined;
      throw new WorkspaceError(`cannot open ${this.dir}: ${e.message}`, { cause: e });
    }
    try {
      this.check(opened);
    } catch (e) {
      opened.close();
      throw e;
    }
    return opened;
  }

  /** Refuses `opened` (this directory, opened, as the kept reading instance holds it) if
   * another user made the link at its name, or its parent is writable by every user and
   * not sticky, or another user owns it or every user can write it. */
  recheck(opened) {
    this.#checkPlace();
    this.check(opened);
  }

  /** Refuses `opened` (this directory, opened) if another user owns it or every user can
   * write it. */
  check(opened) {
    let distrust;
    try {
      distrust = ownerDistrust(opened, this.dir, OWN_MEMORY_HINT);
    } catch (e) {
      throw new WorkspaceError(`cannot check ${this.dir}: ${e.message}`, { cause: e });
    }
    if (distrust) throw new WorkspaceError(distrust);
  }

  /** Refuses the place of the directory, before it is opened: a link at its name another
   * user made (in a home every user can write, another user could plant one leading to
   * a directory of this user's that is not their memory), or a parent every user can
   * write without the sticky bit (the check of a workspace root). A parent that cannot
   * be read fails the call on its own, with its reason, when the directory is opened. */
  #checkPlace() {
    const link = linkDistrust(this.dir, OWN_MEMORY_HINT);
    if (link) throw new WorkspaceError(link);
    const parent = path.dirname(this.dir);
    if (parent === this.dir) return;
    let distrust;
    try {
      distrust = rootDistrust(parent, OWN_MEMORY_HINT);
    } catch {
      return;
    }
    if (distrust) throw new WorkspaceError(distrust);
  }

  /** Makes sure the directory exists (mode 0700 when created here, its parents too);
   * whether this call created it. */
  create() {
    if (this.existing()) return false;
    try {
      makeDirectories(this.dir);
      return true;
    } catch (e) {
      if (e.code !== "EEXIST") throw new WorkspaceError(`cannot create ${this.dir}: ${e.message}`, { cause: e });
    }
    // Another writer made it first, or something that is no directory yet is there: a
    // link to a missing one.
    if (this.existing()) return false;
    let target = "";
    try {
      target = fs.readlinkSync(this.dir);
    } catch {}
    throw new WorkspaceError(
      `${this.dir} is a symbolic link to ${target}, which does not exist: create that directory, or remove the link`,
    );
  }

  /** Removes the directory a failed call created, if it is still empty. */
  removeCreated() {
    try {
      fs.rmdirSync(this.dir);
    } catch {
      // Not empty (another writer's file is there) or already gone: leave it.
    }
  }
}

/** The `globalUser` option of `openWorkspace` (undefined: off) as a GlobalUser. `dir`
 * defaults to `$HOME/.metis`, when HOME is an absolute path. */
export function globalUserOption(option) {
  if (option === undefined) return undefined;
  if (option === null || typeof option !== "object") {
    throw new TypeError(`globalUser must be an object ({ dir, agentWrites }) or undefined, got ${option === null ? "null" : typeof option}`);
  }
  const { dir, agentWrites = false } = option;
  if (typeof agentWrites !== "boolean") {
    throw new TypeError(`globalUser.agentWrites must be a boolean, got ${typeof agentWrites}`);
  }
  if (dir !== undefined && typeof dir !== "string") {
    throw new TypeError(`globalUser.dir must be a string, got ${typeof dir}`);
  }
  // As given: a relative one is refused by every call (`checkedDir`), as the Rust host
  // refuses it.
  return new GlobalUser(dir ?? inHome(), agentWrites);
}

/** `dir` and its missing parents, each made with mode 0700, as the Rust host's recursive
 * `DirBuilder` makes them: EEXIST when `dir` itself is already there, or a parent is
 * there but is no directory (a link to a missing one). */
function makeDirectories(dir) {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
    return;
  } catch (e) {
    if (e.code !== "ENOENT" || path.dirname(dir) === dir) throw e;
  }
  const parent = path.dirname(dir);
  try {
    makeDirectories(parent);
  } catch (e) {
    if (e.code !== "EEXIST" || !isDirectory(parent)) throw e;
  }
  fs.mkdirSync(dir, { mode: 0o700 });
}

/** Whether `dir` is a directory (through a link). */
function isDirectory(dir) {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** `$HOME/.metis`; an error when HOME is unset or not absolute. */
function inHome() {
  const home = process.env.HOME;
  if (!home || !path.isAbsolute(home)) {
    throw new TypeError(
      `globalUser.dir is needed: HOME is ${home ? `not an absolute path (${JSON.stringify(home)})` : "not set"}, so there is no ~/.metis`,
    );
  }
  return path.join(home, ".metis");
}
