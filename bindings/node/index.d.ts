// Types for metis-memory (the `metis:memory@0.4.0` component, for Node).

/** This package's version: the release's (the WIT package's, `wit/world.wit`), read from
 * the package's own package.json. */
export const version: string;

/** One of the byte-budgeted memory files: the two in a workspace's `.metis/`, and the
 * user's own USER.md, shared by every workspace (`"~/.metis/USER.md"`, global user memory:
 * see {@link OpenOptions.globalUser}). With global user memory off, the user's own reads
 * as empty and every write to it fails with an `io` {@link StoreError}. */
export type MemoryFileName = "MEMORY.md" | "USER.md" | "~/.metis/USER.md";

/** What a successful write did. Hashes are SHA-256, lowercase hex. */
export interface WriteResult {
  file: MemoryFileName;
  beforeHash: string;
  afterHash: string;
  beforeSizeBytes: number;
  afterSizeBytes: number;
  /** The file is now strictly larger than its soft cap: consolidate soon. */
  overSoftCap: boolean;
  /** Always `false`: a write over the hard cap is refused instead. */
  overHardCap: boolean;
}

/** One thing the memory audit found: a poisoning-scan rule matching a line on disk. */
export interface AuditFinding {
  /** The 1-based line the match starts on. */
  line: number;
  /** The rule's stable id, e.g. `injection-ignore-instructions`. */
  rule: string;
  detail: string;
}

export type AuditPolicy = "off" | "report" | "omit" | "refuse";

/** One memory file as prompt composition read it. */
export interface PromptSource {
  file: MemoryFileName;
  /** SHA-256 of the bytes read: the version to pass as `seen` or `expectedHash`. */
  sha256: string;
  sizeBytes: number;
  included: boolean;
  findings: AuditFinding[];
}

export interface ComposedPrompt {
  text: string;
  /** `~/.metis/USER.md` (with global user memory on), USER.md, then MEMORY.md. */
  sources: PromptSource[];
}

/** A tool as an LLM API takes it (the spec's field names). */
export interface ToolDefinition {
  name: "memory_add" | "memory_replace" | "memory_consolidate";
  description: string;
  /** The tool's input JSON Schema. */
  input_schema: Record<string, unknown>;
}

export type Operation = "add" | "replace" | "consolidate";

/** An event for the host to publish, with the spec's field names (§7). */
export type MemoryEvent =
  | {
      type: "memory.updated";
      payload: {
        file: MemoryFileName;
        operation: Operation;
        before_hash: string;
        after_hash: string;
        before_size_bytes: number;
        after_size_bytes: number;
      };
    }
  | {
      type: "memory.eviction";
      payload: {
        file: MemoryFileName;
        trigger: "size_cap_exceeded" | "manual";
        /** Always 0: despite the event's name (the reference implementation's, which the
         * contract keeps), the store never drops an entry by itself. The event is the cue
         * to consolidate the file. */
        entries_evicted: number;
        size_before_bytes: number;
        size_after_bytes: number;
      };
    };

/** A tool call that wrote its file. */
export interface ToolSuccess {
  /** The tool result text for the model. */
  text: string;
  operation: Operation;
  result: WriteResult;
  /** `memory.updated`, then `memory.eviction` when over the soft cap. */
  events: MemoryEvent[];
}

/** A version of a memory file: the SHA-256 of its bytes. */
export interface FileVersion {
  file: MemoryFileName;
  sha256: string;
}

export interface CallToolOptions {
  /** The versions of the files the model has been shown whole: a `memory_consolidate` of
   * a listed file is refused (showing the current content) unless the file is still that
   * version. A file not listed was shown nothing: a consolidate of it goes through only
   * while it is empty or missing (unless {@link CallToolOptions.unheld}). */
  seen?: Partial<Record<MemoryFileName, string>> | FileVersion[];
  /** Files kept out of the model's context: every tool write to them is refused. */
  withheld?: MemoryFileName[];
  /** The memory poisoning scan's parts (both on by default). */
  scan?: { invisibleCharacters?: boolean; injectionPatterns?: boolean };
  /** Opt out of the hold by name (`true`): the component's `call-with-options` without
   * `hold-unseen`, and a `memory_consolidate` of a file not in `seen` rewrites it
   * whatever it holds. For a person's own script or a test that
   * knows what it replaces; never for a model's calls. Default `false`. */
  unheld?: boolean;
}

export interface OpenOptions {
  /** Use `.metis` even when it is a symbolic link (refused by default: a cloned
   * repository could point it at another project's memory, or anywhere). */
  followMetisLink?: boolean;
  /** Use `.metis` even when another user owns it, or when the workspace root can be
   * written by every user and has no sticky bit. Refused by default (a
   * {@link WorkspaceError} saying why, and nothing created or written), as git refuses a
   * repository another user owns: another user's `.metis` could put entries into this
   * agent's prompt and read what it adds, and in such a root any user could replace
   * `.metis`. Group-writable roots, and sticky ones like /tmp, are used. */
  trustForeignMetis?: boolean;
  /** Pre-open `.metis/` read-only for every call (for agents that may consult memory but
   * not edit it): reads work; every write fails with a {@link ReadOnlyError} (a
   * {@link ToolError} from a tool call) whose text says why, and changes nothing; no
   * `.metis/` is created. */
  readOnly?: boolean;
  /** What one call may use; exceeding either is a {@link TrapError} (see there for what a
   * trapped write leaves). Defaults: {@link DEFAULT_LIMITS}. */
  limits?: Partial<Limits>;
  /** Global user memory (off when absent): the user's own USER.md (`"~/.metis/USER.md"`),
   * in their own `.metis/` directory, composed into every prompt ahead of the workspace's
   * USER.md under its own heading, with the caps of USER.md, its own lock and its own
   * audit. Its directory is pre-opened beside the workspace's `.metis/`: through a link
   * if it is one, but refused (a {@link WorkspaceError}) if another user made that link,
   * its parent can be written by every user and has no sticky bit, or another user owns
   * it or every user can write it, unless {@link OpenOptions.trustForeignMetis}. A write
   * creates it (mode 0700) if it is missing, and removes it again if that write fails;
   * reads never create it (a link to a missing directory is refused by a write, not
   * created through). */
  globalUser?: GlobalUserOptions;
  /** Each prompt section's heading ends with its file's fill level against its hard cap,
   * `[67% — 2,744/4,096 bytes]`, so the model consolidates before a write is refused.
   * Off by default. */
  promptBudget?: boolean;
}

/** Where the user's own USER.md is, and whether the agent writes it. */
export interface GlobalUserOptions {
  /** The user's own `.metis/` directory, an absolute path (kept as given: with a relative
   * one, or one starting with `~`, which nothing expands, every call fails with a
   * {@link WorkspaceError}). Default: `$HOME/.metis` (a `TypeError` when HOME is unset or
   * not an absolute path). */
  dir?: string;
  /** Whether a tool call's `USER.md` is the user's own file, so facts about the person
   * follow them into every workspace (`true`), or the workspace's (`false`, the default:
   * the agent reads the user's own file, the person edits it). */
  agentWrites?: boolean;
}

/** Global user memory as a workspace has it. */
export interface GlobalUser {
  /** The user's own `.metis/` directory, as given. */
  readonly dir: string;
  readonly agentWrites: boolean;
}

/** A write the model of a session made (`SessionState.ownWrites`). */
export interface OwnWrite {
  readonly file: MemoryFileName;
  /** The SHA-256 of the file before the write and after it. */
  readonly beforeSha256: string;
  readonly afterSha256: string;
}

/** What the model of one conversation has been shown, as the component last returned it:
 * the state its next tool call is held to. The component moves it; a host only keeps it.
 * Shown means: composed into a system prompt it was sent ({@link Session.systemPrompt}),
 * returned by {@link Session.memoryUpdate}, or shown in a refusal's message (from the
 * next response on), or written by the model itself (a consolidate, or an edit of the
 * version it held). */
export interface SessionState {
  /** The version of each file the model has been shown whole: a `memory_consolidate` of
   * a listed file is refused (showing the current content) unless it is still that
   * version. A file not listed was shown nothing: it is held to the empty file, so a
   * consolidate of it goes through only while it is empty or missing. */
  readonly seen: readonly Readonly<FileVersion>[];
  /** Files the audit kept out of the model's context: every tool write to them is refused. */
  readonly withheld: readonly MemoryFileName[];
  /** Versions refusals of the current model response showed it, seen from the next
   * response on. */
  readonly shown: readonly Readonly<FileVersion>[];
  /** The writes the model made in this session, oldest first (the last 16): a refusal
   * says when they, not another session or a person, moved a file. */
  readonly ownWrites: readonly Readonly<OwnWrite>[];
}

export interface SessionOptions {
  /** What prompt composition (and {@link Session.memoryUpdate}) does with a file the
   * memory audit flags. Default `"omit"`: it is left out of the prompt, and the tools
   * refuse to write it. */
  audit?: AuditPolicy;
  /** The memory poisoning scan's parts for tool calls (both on by default). */
  scan?: { invisibleCharacters?: boolean; injectionPatterns?: boolean };
  /** A snapshot session (default `false`): {@link Session.systemPrompt} composes the
   * memory once per base and returns the same bytes for the rest of the conversation,
   * whatever is written meanwhile, so a provider's prompt cache keeps the whole prefix
   * (put the cache breakpoint after the system prompt). The model learns of its own
   * writes from their tool results, and of anyone else's from
   * {@link Session.memoryUpdate}: call it before each user turn and append what it
   * returns at the start of that turn, never to the system prompt. */
  snapshot?: boolean;
}

/** A model's conversation with a workspace's memory ({@link Workspace.session}): compose
 * the prompt with {@link Session.systemPrompt} before every model call and run the
 * model's tool calls with {@link Session.callTool}; a `memory_consolidate` the model based
 * on an old version, or on nothing (a file it was never shown), is refused, with the
 * current content shown to it. How the session moves is decided in the component; this
 * only keeps it between calls. Calls of one session may run concurrently: each takes the
 * session the one before it returned. */
export interface Session {
  readonly workspace: Workspace;
  /** The audit policy prompts and memory updates are composed under. */
  readonly audit: AuditPolicy;
  /** Whether this is a snapshot session ({@link SessionOptions.snapshot}). */
  readonly snapshot: boolean;
  /** What the model has been shown (frozen); a call that throws leaves it as it was. */
  readonly state: SessionState;
  /** The system prompt for the next model call (`base`, then the memory sections), with
   * the versions it was composed from: the session starts again from what the model now
   * sees. In a snapshot session, the prompt first composed for `base`, byte for byte,
   * and the model is asked again ({@link Session.nextResponse}); another base composes
   * and freezes anew. A store refusal ({@link FlaggedError} under `"refuse"`) leaves the
   * session as it was. */
  systemPrompt(base?: string): Promise<ComposedPrompt>;
  /** What changed in the memory since the model was last shown each file, as text to
   * append to the conversation (at the start of the next user turn; never in the system
   * prompt), or `null` when nothing did. Each changed file is shown whole, between
   * marker lines naming its version, and counts as shown once returned: the model's
   * next consolidate is held to it, so the text must reach the model. The model's own
   * writes, which it learnt from their tool results, are not news. For a snapshot
   * session (any session may call it). A file that is not text rejects with its
   * {@link StoreError}, and the session is left as it was. */
  memoryUpdate(): Promise<string | null>;
  /** One file shown to the model on demand (a memory tool's `view`), read fresh and
   * audited under the session's audit (the component's `workspace.show`). Unless
   * {@link ShownFile.withheld}, the file counts as seen at the version read from the
   * model's next response ({@link Session.nextResponse}), so the host
   * must show the model exactly {@link ShownFile.text}. With `whole: false` the host shows
   * only part of it (a range of lines; `workspace.show` not `whole`): a flagged file is
   * still withheld, but nothing counts as seen, since a consolidate built on a part would
   * drop the rest. A file that is not text rejects with its {@link StoreError}, and the
   * session is left as it was. */
  showFile(file: MemoryFileName, options?: { whole?: boolean }): Promise<ShownFile>;
  /** Runs one of the model's tool calls on a fresh instance, held to what the model has
   * seen; `input` is its JSON text or the parsed value. A refusal rejects with
   * {@link ToolError} (and still moves the session: a stale consolidate's shows the
   * current content). A {@link TrapError} leaves the session as it was. */
  callTool(name: string, input: string | unknown): Promise<ToolSuccess>;
  /** The model is asked again without a freshly composed prompt: what refusals of its last
   * response showed it now counts as seen. */
  nextResponse(): Promise<void>;
}

/** What {@link Session.showFile} returns. */
export interface ShownFile {
  /** The file's text as read (`""` when missing). It must not reach the model when
   * {@link ShownFile.withheld}. */
  text: string;
  /** What the audit found in it (nothing under `"off"`). */
  findings: AuditFinding[];
  /** The audit keeps the file out (it found something, under `"omit"` or `"refuse"`): the
   * session withholds it, and the tools refuse to write it. */
  withheld: boolean;
}

/** What one call of the component may use. */
export interface Limits {
  /** Units charged on every function entry and loop iteration of the guest (coarser than
   * wasmtime's per-instruction fuel, so the default differs from the Rust host's). */
  fuel: number;
  /** Bytes of linear memory the guest may grow to. */
  memoryBytes: number;
}

/** 100 million units of fuel and 64 MiB: a write at the hard cap uses well under 1% of
 * either. */
export const DEFAULT_LIMITS: Readonly<Limits>;

/** A workspace whose `.metis/` holds the memory files. Every call reads the files fresh,
 * on an instance of the component that sees only `.metis/`: a fresh one for each write,
 * one kept between reads (see the README). */
export interface Workspace {
  readonly root: string;
  readonly metisDir: string;
  /** The limits every call of this workspace runs under. */
  readonly limits: Readonly<Limits>;
  /** Whether `.metis/` is pre-opened read-only ({@link OpenOptions.readOnly}). */
  readonly readOnly: boolean;
  /** Global user memory ({@link OpenOptions.globalUser}); `undefined` when off. */
  readonly globalUser: GlobalUser | undefined;
  /** Whether prompt headings show each file's fill level ({@link OpenOptions.promptBudget}). */
  readonly promptBudget: boolean;
  /** The memory files this workspace has: `"MEMORY.md"`, `"USER.md"`, and
   * `"~/.metis/USER.md"` with global user memory on, unless it is the workspace's own
   * (see {@link Workspace.globalIsWorkspace}). */
  memoryFiles(): MemoryFileName[];
  /** Whether the user's own `.metis/` is this workspace's (a workspace at home: the same
   * directory, by device and inode): then the two USER.md are one file, which the
   * component composes and writes as the workspace's `"USER.md"`. */
  globalIsWorkspace(): boolean;
  /** Where `file` is on disk: in `.metis/`, or for `"~/.metis/USER.md"`, in the user's own
   * directory (`undefined` with global user memory off). */
  filePath(file: MemoryFileName): string | undefined;
  /** A conversation with this workspace's memory, held to what its model has seen: what
   * an agent host uses (see {@link Session}). */
  session(options?: SessionOptions): Session;
  /** The file's text; `""` when missing. */
  read(file: MemoryFileName): Promise<string>;
  exists(file: MemoryFileName): Promise<boolean>;
  /** Size on disk; 0 when missing. */
  sizeBytes(file: MemoryFileName): Promise<number>;
  softCap(file: MemoryFileName): Promise<number>;
  hardCap(file: MemoryFileName): Promise<number>;
  /** Appends `entry` (stripped) as its own line. */
  addEntry(file: MemoryFileName, entry: string): Promise<WriteResult>;
  /** Replaces the one occurrence of `oldText` with `newText` (may be `""`). */
  replace(file: MemoryFileName, oldText: string, newText: string): Promise<WriteResult>;
  /** Makes `content` the whole file. */
  consolidate(file: MemoryFileName, content: string): Promise<WriteResult>;
  /** `consolidate`, only if the file's SHA-256 is still `expectedHash` (else
   * {@link ChangedError}, with the current hash and content). */
  consolidateIfUnchanged(
    file: MemoryFileName,
    content: string,
    expectedHash: string,
  ): Promise<WriteResult>;
  /** `base`, then the `~/.metis/USER.md` (with global user memory on), USER.md and
   * MEMORY.md sections. */
  assembleSystemPrompt(base?: string): Promise<string>;
  /** The prompt, the version of each file it read, and the audit under `audit`. */
  composeSystemPrompt(base?: string, audit?: AuditPolicy): Promise<ComposedPrompt>;
  /** The memory audit of the file as it is on disk. */
  audit(file: MemoryFileName): Promise<AuditFinding[]>;
  /** `memory_add`, `memory_replace`, `memory_consolidate`. */
  toolDefinitions(): Promise<ToolDefinition[]>;
  /** Runs a tool call outside any session; `input` is its JSON text or the parsed value.
   * A refusal rejects with {@link ToolError}. Held as a session shown `seen` (nothing
   * when absent) with `withheld` kept from it: a `memory_consolidate` of a file not in
   * `seen` that is not empty is refused, its content shown in the message (the
   * `ToolError`'s `shown`), and nothing is written. `unheld: true` opts out by name. An
   * agent host uses {@link Workspace.session} instead. */
  callTool(name: string, input: string | unknown, options?: CallToolOptions): Promise<ToolSuccess>;
}

/** The workspace at `root` (memory in `root/.metis/`). Nothing is touched until a call. */
export function openWorkspace(root: string, options?: OpenOptions): Workspace;

export class MemoryError extends Error {}

export type StoreErrorKind =
  | "hard-cap-exceeded"
  | "empty-entry"
  | "nothing-to-replace"
  | "not-found"
  | "not-unique"
  | "invalid-utf8"
  | "not-a-regular-file"
  | "busy"
  | "io"
  | "read-only"
  | "file-too-large"
  | "insufficient-space"
  | "changed"
  | "flagged"
  | "too-large"
  | "poisoned"
  | "unsynced";

/** The store refused; nothing on disk changed. `message` is the component's own text (the
 * `store-error` payload's). */
export class StoreError extends MemoryError {
  /** The WIT case name. */
  readonly kind: StoreErrorKind;
  /** The file the refusal is about. */
  readonly file: MemoryFileName;
}
export class HardCapExceededError extends StoreError {
  readonly kind: "hard-cap-exceeded";
  readonly attemptedBytes: number;
  readonly capBytes: number;
}
export class EmptyEntryError extends StoreError {
  readonly kind: "empty-entry";
}
export class NothingToReplaceError extends StoreError {
  readonly kind: "nothing-to-replace";
}
export class NotFoundError extends StoreError {
  readonly kind: "not-found";
}
export class NotUniqueError extends StoreError {
  readonly kind: "not-unique";
  readonly count: number;
}
export class InvalidUtf8Error extends StoreError {
  readonly kind: "invalid-utf8";
  /** The byte offset of the first invalid byte. */
  readonly offset: number;
}
export class NotARegularFileError extends StoreError {
  readonly kind: "not-a-regular-file";
}
export class BusyError extends StoreError {
  readonly kind: "busy";
}
export class IoError extends StoreError {
  readonly kind: "io";
}
/** The workspace was opened read-only, or its filesystem refused a write as read-only. */
export class ReadOnlyError extends StoreError {
  readonly kind: "read-only";
}
/** The filesystem refused a file's size (a file-size limit). */
export class FileTooLargeError extends StoreError {
  readonly kind: "file-too-large";
}
/** The filesystem, or the user's quota on it, is full. */
export class InsufficientSpaceError extends StoreError {
  readonly kind: "insufficient-space";
}
export class ChangedError extends StoreError {
  readonly kind: "changed";
  readonly expectedHash: string;
  readonly currentHash: string;
  readonly currentContent: string;
}
export class FlaggedError extends StoreError {
  readonly kind: "flagged";
  readonly findings: AuditFinding[];
}
export class TooLargeError extends StoreError {
  readonly kind: "too-large";
  readonly sizeBytes: number;
  readonly limitBytes: number;
}
/** A scanned write (`write-options.scan`) refused by the memory poisoning scan: `rule`
 * matched. */
export class PoisonedError extends StoreError {
  readonly kind: "poisoned";
  readonly rule: string;
}
/** The write was made (`result`), but `.metis/` could not be synced after it: a crash
 * may undo it. Not a success, since it is not durable; not one to retry, since it is
 * there (an add repeated would be made twice). */
export class UnsyncedError extends StoreError {
  readonly kind: "unsynced";
  readonly result: WriteResult;
  readonly reason: string;
}

/** A refused tool call; nothing changed. `message` is the text for the model. */
export class ToolError extends MemoryError {
  readonly isUserVisible: boolean;
  /** The file version the message showed the model in full (a stale consolidate). */
  readonly shown: FileVersion | null;
}

/** The component trapped (out of fuel or memory, or a bug); the call's lock and temporary
 * file were cleaned up. A read changed nothing. A write's file holds its old bytes, or its
 * new ones if the trap came after the rename that makes the write visible (never a mix). */
export class TrapError extends MemoryError {
  /** For a write: `true`, it was made before the trap, and a retry would make it again;
   * `false`, nothing was written and a retry is safe; `null` when the write left no trace
   * to tell by (it trapped before taking the file's lock or after releasing it: read the
   * file), and for a read. */
  readonly written: boolean | null;
}

/** `.metis` is not usable: not a directory, a refused symbolic link, not creatable, or
 * not to be trusted ({@link OpenOptions.trustForeignMetis}). Nothing was changed. */
export class WorkspaceError extends MemoryError {
  /** As the CLI's JSON names this kind of failure. */
  readonly kind: "workspace";
}
