// metis-memory for Node: the memory component (`metis:memory@0.4.0`), transpiled by jco,
// run on @bytecodealliance/preview2-shim in a sandbox that pre-opens only the workspace's
// `.metis/`: the directory opened and checked, not its path (preopen.js), and only one this
// user may trust. Writes get a fresh instance each; reads share one kept as the Rust host
// keeps it (`Workspace.#read`), dropped after a trap, so a trap cannot poison later calls.
// Reads, and every call of a `readOnly` workspace, see `.metis/` through a read-only
// pre-open (read-only.js). A session (session.js) keeps what the component decides a
// conversation has seen between calls. With global user memory on (`globalUser`), the
// user's own `.metis/` is pre-opened beside the workspace's (global-user.js). Every call's
// work runs on a worker thread that owns the instances (worker.js), each call posted there
// in the order made (remote.js).

import fs from "node:fs";

/** This package's version: the release's, stamped from the WIT package's
 * (`wit/world.wit`) when the package is built. */
export const version = JSON.parse(fs.readFileSync(new URL("./package.json", import.meta.url), "utf8")).version;

export { MemoryError, StoreError, HardCapExceededError, EmptyEntryError, NothingToReplaceError, NotFoundError, NotUniqueError, InvalidUtf8Error, NotARegularFileError, BusyError, IoError, ReadOnlyError, FileTooLargeError, InsufficientSpaceError, ChangedError, FlaggedError, TooLargeError, PoisonedError, UnsyncedError, ToolError, TrapError, WorkspaceError } from "./errors.js";
export { DEFAULT_LIMITS } from "./component.js";
export { openWorkspace } from "./remote.js";
