// A model's conversation with a workspace's memory (`Workspace.session()`), as the Rust
// host's `Session` is: how a session moves is decided in the component
// (`compose-session-prompt`, `call-in-session`, `next-response`); this class only keeps
// the last session the component returned and passes it to the next call, unchanged.

/** What a session holds before its first prompt: nothing seen, so a consolidate is held
 * to nothing (compose the prompt first). */
const EMPTY = Object.freeze({ seen: [], withheld: [], shown: [] });
const EMPTY_STATE = Object.freeze({
  seen: Object.freeze([]),
  withheld: Object.freeze([]),
  shown: Object.freeze([]),
});

/** Made by `Workspace.session()`; `calls` runs the component for it (index.js). */
export class Session {
  #workspace;
  #audit;
  #calls;
  /** The session as the component returned it, passed back as it is. */
  #kept = EMPTY;
  /** The same, as this package shows it (`state`). */
  #state = EMPTY_STATE;
  #get = () => this.#kept;
  #keep = (session, state) => {
    this.#kept = session;
    this.#state = state;
  };

  constructor(workspace, audit, calls) {
    this.#workspace = workspace;
    this.#audit = audit;
    this.#calls = calls;
  }

  /** The workspace this session reads and writes. */
  get workspace() {
    return this.#workspace;
  }

  /** The audit policy prompts are composed under. */
  get audit() {
    return this.#audit;
  }

  /** What the model has seen, as the component last returned it: the state the next tool
   * call is held to. Frozen; a call that throws leaves it as it was. */
  get state() {
    return this.#state;
  }

  /** The system prompt for the next model call (`base`, then the memory sections), with
   * the versions it was composed from: the session starts again from what the model now
   * sees. A store refusal (FlaggedError under "refuse") leaves the session as it was. */
  async systemPrompt(base = "") {
    return this.#calls.systemPrompt(base, this.#keep);
  }

  /** Runs one of the model's tool calls (`input`: its JSON text, or a value sent as JSON)
   * on a fresh instance, held to what the model has seen: a ToolSuccess, or a ToolError
   * for a refusal (a stale consolidate's shows the current content). A TrapError leaves
   * the session as it was, and the file as the trap left it: read it to know. */
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
