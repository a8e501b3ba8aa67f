// The errors this package throws: one class per WIT `store-error` case (the component's
// own text as the message), a refused tool call, a trap, an unusable workspace; and how a
// component error or a failed call becomes one of them.

import { fuelSpent } from "./meter.js";
import { FILE_NAME, fileVersion, finding, text, writeResult } from "./values.js";

/** Every error this package throws on purpose. */
export class MemoryError extends Error {
  get name() {
    return this.constructor.name;
  }
}

/** The store refused: `message` is the component's own text (the `store-error`'s). */
export class StoreError extends MemoryError {
  constructor(kind, message, details = {}) {
    super(message);
    this.kind = kind;
    Object.assign(this, details);
  }
}

export class HardCapExceededError extends StoreError {}

export class EmptyEntryError extends StoreError {}

export class NothingToReplaceError extends StoreError {}

export class NotFoundError extends StoreError {}

export class NotUniqueError extends StoreError {}

export class InvalidUtf8Error extends StoreError {}

export class NotARegularFileError extends StoreError {}

export class BusyError extends StoreError {}

export class IoError extends StoreError {}

/** The workspace was opened read-only, or its filesystem refused a write as read-only. */
export class ReadOnlyError extends StoreError {}

/** The filesystem refused a file's size (a file-size limit). */
export class FileTooLargeError extends StoreError {}

/** The filesystem, or the user's quota on it, is full. */
export class InsufficientSpaceError extends StoreError {}

export class ChangedError extends StoreError {}

export class FlaggedError extends StoreError {}

export class TooLargeError extends StoreError {}

/** A scanned write (`write-options.scan`) refused by the memory poisoning scan. */
export class PoisonedError extends StoreError {}

/** The write was made (`result`), but `.metis/` could not be synced after it: a crash
 * may undo it. Not a success, since it is not durable; not one to retry, since it is
 * there (an add repeated would be made twice). */
export class UnsyncedError extends StoreError {}

const STORE_ERRORS = {
  "hard-cap-exceeded": HardCapExceededError,
  "empty-entry": EmptyEntryError,
  "nothing-to-replace": NothingToReplaceError,
  "not-found": NotFoundError,
  "not-unique": NotUniqueError,
  "invalid-utf8": InvalidUtf8Error,
  "not-a-regular-file": NotARegularFileError,
  busy: BusyError,
  io: IoError,
  "read-only": ReadOnlyError,
  "file-too-large": FileTooLargeError,
  "insufficient-space": InsufficientSpaceError,
  changed: ChangedError,
  flagged: FlaggedError,
  "too-large": TooLargeError,
  poisoned: PoisonedError,
  unsynced: UnsyncedError,
};

/** A tool call changed nothing: invalid input, an unknown tool, or a refused write. */
export class ToolError extends MemoryError {
  constructor(message, isUserVisible, shown) {
    super(message);
    this.isUserVisible = isUserVisible;
    this.shown = shown;
  }
}

/** The component trapped (out of fuel or memory, a guest panic, or a host call that
 * threw); the call's lock and temporary file were cleaned up (the component's
 * `recover-after-trap`), and the next call runs on a fresh instance. A read changed
 * nothing. A write's file holds its old bytes, or its new ones if the trap came after the
 * rename that makes the write visible (never a mix): `written` says which when the write
 * left a trace to tell by (it held the file's lock), so a retry never adds an entry twice;
 * `null` when it did not (it trapped before taking the lock, or after releasing it): read
 * the file to know. */
export class TrapError extends MemoryError {
  constructor(message, options) {
    super(message, options);
    /** For a write: `true`, it was made before the trap (a retry would make it again);
     * `false`, nothing was written (a retry is safe); `null` when no trace tells (read
     * the file). `null` for a read. */
    this.written = null;
  }
}

/** `.metis` could not be used: not a directory, a refused symbolic link, not creatable,
 * or not to be trusted (another user's, or in a directory every user can write). */
export class WorkspaceError extends MemoryError {
  /** "workspace", as the CLI's JSON names this kind of failure. */
  get kind() {
    return "workspace";
  }
}

/** The store's refusal (a WIT `store-error`), as this package throws it: the component's
 * own text (`message`), the file it is about (`file`; an `unsynced` write's is its
 * result's), and the case's details, each case's payload being a record that carries
 * both. */
function storeError(error) {
  const val = error.val;
  const details = { file: FILE_NAME[error.tag === "unsynced" ? val.result.file : val.file] };
  switch (error.tag) {
    case "hard-cap-exceeded":
      Object.assign(details, { attemptedBytes: Number(val.attemptedBytes), capBytes: Number(val.capBytes) });
      break;
    case "not-unique":
      details.count = val.count;
      break;
    case "invalid-utf8":
      details.offset = Number(val.offset);
      break;
    case "changed":
      Object.assign(details, {
        expectedHash: val.expectedHash,
        currentHash: val.currentHash,
        currentContent: val.currentContent,
      });
      break;
    case "flagged":
      details.findings = val.findings.map(finding);
      break;
    case "too-large":
      Object.assign(details, { sizeBytes: Number(val.sizeBytes), limitBytes: Number(val.limitBytes) });
      break;
    case "poisoned":
      details.rule = val.rule;
      break;
    case "unsynced":
      Object.assign(details, { result: writeResult(val.result), reason: val.reason });
      break;
  }
  const Class = STORE_ERRORS[error.tag] ?? StoreError;
  return new Class(error.tag, val.message, details);
}

/** A thrown `result` error of an export (jco's ComponentError), as opposed to a trap. */
function componentErrorPayload(e) {
  if (e instanceof Error && e.constructor.name === "ComponentError" && Object.hasOwn(e, "payload")) {
    return { payload: e.payload };
  }
  return undefined;
}

/** A tool call's refusal, as this package throws it. */
export function toolError({ message, isUserVisible, shown }) {
  return new ToolError(message, isUserVisible, shown ? fileVersion(shown) : null);
}

/** What a call that threw `e` fails with: this package's own errors as they are, an
 * export's returned `err` (jco's ComponentError: every export with a `result` this package
 * calls returns a `store-error`) as its StoreError, anything else (a guest trap, a host
 * call that threw) a TrapError. */
export function failure(e, guest) {
  if (e instanceof MemoryError) return e;
  const refused = componentErrorPayload(e);
  if (refused) return storeError(refused.payload);
  const why = guest && fuelSpent(guest) ? "ran out of fuel" : `trapped: ${e?.message ?? e}`;
  return new TrapError(`the memory component ${why}`, { cause: e });
}
