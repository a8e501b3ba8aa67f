// A model's conversation with a workspace's memory (`Workspace.session()`), as the Rust
// host's `Session` is: how a session moves is decided in the component
// (`workspace.compose`, `tools.call-with-options`, `tools.next-response`,
// `workspace.update`, `workspace.show`); this class only keeps the last session the
// component returned and passes it to the next call, unchanged. A snapshot session also keeps the
// prompt it froze for a base.

/** What a session holds before its first prompt: nothing shown, so a consolidate of a
 * file that is not empty is refused, showing it (compose the prompt first). Empty lists
 * read the same to the component and as `state`. */
const EMPTY = Object.freeze({
  seen: Object.freeze([]),
  withheld: Object.freeze([]),
  shown: Object.freeze([]),
  ownWrites: Object.freeze([]),
});

/** Made by `Workspace.session()`; `calls` runs the component for it (workspace.js). Each
 * of `calls` reads the session (`get`) and keeps the one the component returns (`keep`)
 * in one synchronous step, so concurrent calls of one session each take the session the
 * one before returned. */
export class Session {
  #workspace;
  #audit;
  #snapshot;
  #calls;
  /** The session as the component returned it, passed back as it is. */
  #kept = EMPTY;
  /** The same, as this package shows it (`state`). */
  #state = EMPTY;
  /** In a snapshot session, the base and the prompt (the component's value) frozen for
   * it, once composed: `{ base, prompt }`. */
  #frozen;
  #get = () => this.#kept;
  #keep = (session, state) => {
    this.#kept = session;
    this.#state = state;
  };
  #frozenPrompt = {
    get: () => (this.#snapshot ? this.#frozen : undefined),
    set: (base, prompt) => {
      if (this.#snapshot) this.#frozen = { base, prompt };
    },
  };

  constructor(workspace, audit, snapshot, calls) {
    this.#workspace = workspace;
    this.#audit = audit;
    this.#snapshot = snapshot;
    this.#calls = calls;
  }

  /** The workspace this session reads and writes. */
  get workspace() {
    return this.#workspace;
  }

  /** The audit policy prompts and memory updates are composed under. */
  get audit() {
    return this.#audit;
  }

  /** Whether this is a snapshot session: its system prompt is composed once per base and
   * kept byte-identical, and the model learns of others' writes from `memoryUpdate()`. */
  get snapshot() {
    return this.#snapshot;
  }

  /** What the model has been shown, as the component last returned it: the state the
   * next tool call is held to. Frozen; a call that throws leaves it as it was. */
  get state() {
    return this.#state;
  }

  /** The system prompt for the next model call (`base`, then the memory sections), with
   * the versions it was composed from: the session starts again from what the model now
   * sees. In a snapshot session, the prompt first composed for `base`, byte for byte,
   * and the model is asked again (`nextResponse`); another base composes and freezes
   * anew. A store refusal (FlaggedError under "refuse") leaves the session as it was. */
  async systemPrompt(base = "") {
    return this.#calls.systemPrompt(base, this.#get, this.#keep, this.#frozenPrompt);
  }

  /** What changed in the memory since the model was last shown each file, as text to
   * append to the conversation (at the start of the next user turn; never in the system
   * prompt), or null when nothing did. What it shows counts as shown once returned: the
   * model's next consolidate is held to it. The model's own writes, which it learnt from
   * their tool results, are not news. For a snapshot session (any session may call it). */
  async memoryUpdate() {
    return this.#calls.memoryUpdate(this.#get, this.#keep);
  }

  /** One file shown to the model on demand (a memory tool's view), read fresh and
   * audited under the session's audit: `{ text, findings, withheld }`. Unless `withheld`,
   * the file counts as seen at the version read from the model's next response
   * (`nextResponse`), as a refusal's content does, so the host must show the model exactly
   * `text`; when `withheld`, the audit keeps the file out, the text must not reach the
   * model, and every tool write to the file is refused. With `whole: false` the host
   * shows only part of the text (a range of lines; `workspace.show` not `whole`): a
   * flagged file is still withheld, but nothing counts as seen, since a consolidate built
   * on a part would drop the rest. A file that is not text rejects with its StoreError,
   * and the session is left as it was. */
  async showFile(file, { whole = true } = {}) {
    return this.#calls.showFile(file, whole !== false, this.#get, this.#keep);
  }

  /** Runs one of the model's tool calls (`input`: its JSON text, or a value sent as JSON)
   * on a fresh instance, held to what the model has been shown: a ToolSuccess, or a
   * ToolError for a refusal (a consolidate of a version the model does not hold shows the
   * current content). A TrapError leaves the session as it was, and the file as the trap
   * left it: read it to know. */
  async callTool(name, input) {
    return this.#calls.callTool(name, input, this.#get, this.#keep);
  }

  /** The model is asked again without a freshly composed prompt: what refusals of its last
   * response showed it now counts as seen (`systemPrompt` before the next model call does
   * this too). */
  async nextResponse() {
    await this.#calls.nextResponse(this.#get, this.#keep);
  }
}
