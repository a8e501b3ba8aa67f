// Global user memory: the person's own USER.md, in their own `.metis/` directory
// (`~/.metis/`), which the component composes into every workspace's prompt ahead of the
// workspace's USER.md, with its own cap, lock and audit (`global-user` in
// `wit/types.wit`). Off unless a workspace is opened with `globalUser`. As the Rust host's
// `GlobalUser` (host/src/global_user.rs): where the directory is and whether the agent's
// `USER.md` tool writes go to it, and the directory checked, opened, created and removed
// again. What any of it means is the component's: the workspace only says it is on, and
// who writes it (`METIS_MEMORY_GLOBAL_USER`), and pre-opens the directory at guest path
// `global-metis` (workspace.js).

import fs from "node:fs";
import path from "node:path";
import { WorkspaceError } from "./errors.js";
import { openDirectory, ownerDistrust } from "./preopen.js";

/** Where the user's own USER.md is, and whether the agent writes it. */
export class GlobalUser {
  /** The user's own `.metis/` directory (absolute). */
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

  /** What the instance is told (`METIS_MEMORY_GLOBAL_USER`, `wit/world.wit`). */
  get access() {
    return this.agentWrites ? "write" : "read";
  }

  /** The directory's stat if it exists (through a link), else undefined; an error if
   * something other than a directory is there. */
  existing() {
    let stat;
    try {
      stat = fs.statSync(this.dir, { bigint: true });
    } catch (e) {
      if (e.code === "ENOENT") return undefined;
      throw new WorkspaceError(`cannot access ${this.dir}: ${e.message}`, { cause: e });
    }
    if (!stat.isDirectory()) throw new WorkspaceError(`${this.dir} exists but is not a directory`);
    return stat;
  }

  /** The directory opened for pre-opening (an OpenedDir, which the caller closes), or
   * undefined when there is none. It may be a link (the person's own dotfiles), but it
   * must be theirs and not writable by every user, unless `trustForeign`. */
  open(trustForeign) {
    let opened;
    try {
      opened = openDirectory(this.dir, true);
    } catch (e) {
      if (e.code === "ENOENT") return undefined;
      throw new WorkspaceError(`cannot open ${this.dir}: ${e.message}`, { cause: e });
    }
    try {
      this.check(opened, trustForeign);
    } catch (e) {
      opened.close();
      throw e;
    }
    return opened;
  }

  /** Refuses `opened` (this directory, opened) if another user owns it or every user can
   * write it; unless `trustForeign`. */
  check(opened, trustForeign) {
    if (trustForeign) return;
    let distrust;
    try {
      distrust = ownerDistrust(opened, this.dir);
    } catch (e) {
      throw new WorkspaceError(`cannot check ${this.dir}: ${e.message}`, { cause: e });
    }
    if (distrust) throw new WorkspaceError(distrust);
  }

  /** Makes sure the directory exists (mode 0700 when created here, its parents too);
   * whether this call created it. */
  create() {
    if (this.existing()) return false;
    try {
      // The first directory it made, or undefined when another writer made it first.
      return fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 }) !== undefined;
    } catch (e) {
      if (e.code === "EEXIST") return false;
      throw new WorkspaceError(`cannot create ${this.dir}: ${e.message}`, { cause: e });
    }
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
  return new GlobalUser(path.resolve(dir ?? inHome()), agentWrites);
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
