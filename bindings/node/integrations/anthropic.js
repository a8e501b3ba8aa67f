// Claude's memory tool (`memory_20250818`: view, create, str_replace, insert, delete and
// rename over /memories) over a memory session, for the Anthropic TypeScript SDK
// (`@anthropic-ai/sdk`, an optional peer dependency) and its tool runner. /memories holds
// exactly the two bounded files, and every command that writes is one of the three memory
// tools run in the session, so the component holds it to what the model has seen: a
// create, insert or delete rewrites the whole file (memory_consolidate) and goes through
// only once the model has been shown the file as it is. This module decides only what the
// SDK makes its own: where one model response ends (`responses`), the order a response's
// commands run in (the order the runner hands them over, which is the model's), and how a
// refusal reaches the model (a tool_result with is_error, the SDK's ToolError).

import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory";
import { ToolError as ResultError } from "@anthropic-ai/sdk/lib/tools/ToolError";
import { ToolError } from "../errors.js";
import { serially } from "./serial.js";

const ROOT = "/memories";
const FILES = Object.freeze({ [`${ROOT}/MEMORY.md`]: "MEMORY.md", [`${ROOT}/USER.md`]: "USER.md" });
const ABOUT = Object.freeze({ "MEMORY.md": "facts about this workspace", "USER.md": "facts about the user" });
const BOTH = Object.keys(FILES).join(" and ");

/** Claude's memory tool backed by `session`. Hand `tool()` to the runner and iterate it
 * through `responses()`, so the session learns where each model response ends. */
export class MetisMemoryTool {
  #session;
  // Whether `responses()` tells the session where each response ends. Until it does, a
  // view is taken as read at once, as over MCP: nothing else would ever make it count.
  #boundaries = false;

  constructor(session) {
    this.#session = session;
  }

  get session() {
    return this.#session;
  }

  /** The tool for `tools` of `client.beta.messages.toolRunner` (the SDK's `betaMemoryTool`
   * over this one's six commands); `extraProps` as the SDK takes them (`cache_control`). */
  tool(extraProps) {
    return betaMemoryTool(
      {
        view: (command) => this.view(command),
        create: (command) => this.create(command),
        str_replace: (command) => this.str_replace(command),
        insert: (command) => this.insert(command),
        delete: (command) => this.delete(command),
        rename: (command) => this.rename(command),
      },
      extraProps,
    );
  }

  /** The runner's items (messages, or streams when streaming), each after the session has
   * been told that a new model response begins: the model wrote its calls having read the
   * results of the one before, refusals included. */
  async *responses(runner) {
    this.#boundaries = true;
    for await (const item of runner) {
      await serially(this.#session, () => this.#session.nextResponse());
      yield item;
    }
  }

  /** `/memories`: the two files with their sizes and caps, none of their text (nothing
   * counts as shown). A file: its text with line numbers, which counts as shown; with
   * `view_range`, those lines only, which does not. */
  view(command) {
    return serially(this.#session, async () => {
      if (command.path === ROOT || command.path === `${ROOT}/`) return this.#listing();
      const file = this.#file(command.path);
      const range = command.view_range;
      const whole = range === undefined || range === null;
      const stored = this.#storeFile(file);
      const shown = await this.#session.showFile(stored, { whole });
      if (shown.withheld) throw withheld(command.path, stored, shown.findings);
      if (whole && !this.#boundaries) await this.#session.nextResponse();
      const lines = linesOf(shown.text);
      if (whole) {
        if (lines.length === 0) return `${command.path} is empty.`;
        return `Here's the content of ${command.path} with line numbers:\n${numbered(lines, 1)}`;
      }
      const [first, last] = lineRange(range, lines.length, command.path);
      return (
        `Here are lines ${first} to ${last} of ${command.path} (${lines.length} lines) with line numbers. ` +
        `They are part of the file: view the whole file before you rewrite it (create, insert or delete).\n` +
        numbered(lines.slice(first - 1, last), first)
      );
    });
  }

  /** The whole file is `file_text` (memory_consolidate). */
  create(command) {
    return serially(this.#session, async () => {
      const file = this.#file(command.path);
      const outcome = await this.#consolidate(command.path, file, command.file_text);
      return `File written: ${command.path} (${outcome})`;
    });
  }

  /** memory_replace: `old_str` must appear exactly once. */
  str_replace(command) {
    return serially(this.#session, async () => {
      const file = this.#file(command.path);
      const outcome = await this.#call("memory_replace", { file, old: command.old_str, new: command.new_str });
      return `The memory file ${command.path} has been edited: ${outcome}`;
    });
  }

  /** `insert_text` as lines after line `insert_line` (0: at the top) of the file as it is
   * now, the result written whole (memory_consolidate), so it goes through only if the
   * model has seen that version. */
  insert(command) {
    return serially(this.#session, async () => {
      const file = this.#file(command.path);
      if (typeof command.insert_text !== "string")
        throw new ResultError("insert_text must be a string; nothing was written.");
      const lines = linesOf(await this.#session.workspace.read(this.#storeFile(file)));
      const at = command.insert_line;
      if (!Number.isInteger(at) || at < 0 || at > lines.length) {
        throw new ResultError(
          `Invalid insert_line ${JSON.stringify(at)}: ${command.path} has ${lines.length} lines, so it must be within [0, ${lines.length}]; nothing was written.`,
        );
      }
      lines.splice(at, 0, ...linesOf(command.insert_text));
      const outcome = await this.#consolidate(command.path, file, lines.map((line) => `${line}\n`).join(""));
      return `The file ${command.path} has been edited (${outcome})`;
    });
  }

  /** The file emptied (memory_consolidate with ""): the two files always exist. */
  delete(command) {
    return serially(this.#session, async () => {
      const file = this.#file(command.path);
      const outcome = await this.#consolidate(command.path, file, "");
      return `${command.path} is now empty; the file itself stays, as the memory always holds its two files (${outcome})`;
    });
  }

  /** Refused: the two files keep their names. */
  rename() {
    return serially(this.#session, async () => {
      throw new ResultError(
        `rename is not supported: the memory holds exactly two files, ${BOTH}, which keep their names; nothing was changed.`,
      );
    });
  }

  async #listing() {
    const workspace = this.#session.workspace;
    const lines = await Promise.all(
      Object.entries(FILES).map(async ([path, file]) => {
        const stored = this.#storeFile(file);
        const [size, soft, hard] = await Promise.all([
          workspace.sizeBytes(stored),
          workspace.softCap(stored),
          workspace.hardCap(stored),
        ]);
        return `${path}: ${size} bytes (soft cap ${soft}, hard cap ${hard}), ${ABOUT[file]}`;
      }),
    );
    return (
      `${ROOT} holds two files; a write that would take one past its hard cap is refused:\n${lines.join("\n")}\n` +
      `Nothing else can be created, and they cannot be renamed. View a file to read it: create, insert ` +
      `and delete rewrite the whole file, so they need the file as it is now.`
    );
  }

  /** The tool's name for the file at `path` (what the memory tools take), or a refusal. */
  #file(path) {
    const file = typeof path === "string" && Object.hasOwn(FILES, path) ? FILES[path] : undefined;
    if (file === undefined) {
      throw new ResultError(
        `${JSON.stringify(path)} is not a memory file: the memory holds exactly two files, ${BOTH} (view ${ROOT} to list them); nothing else can be viewed or written.`,
      );
    }
    return file;
  }

  /** The file the memory tools write for `file`: with global user memory on and the agent
   * writing it, USER.md is the user's own, which is what the model views too. */
  #storeFile(file) {
    const workspace = this.#session.workspace;
    const own = file === "USER.md" && workspace.globalUser?.agentWrites === true && !workspace.globalIsWorkspace();
    return own ? "~/.metis/USER.md" : file;
  }

  async #consolidate(path, file, content) {
    return this.#call("memory_consolidate", { file, content }, path);
  }

  /** One memory tool call in the session: its text, or its refusal as an error result. A
   * refusal that showed the file as it is now is told in this tool's words: its
   * memory_consolidate is a create (or an insert or delete) here. */
  async #call(name, input, path) {
    try {
      return (await this.#session.callTool(name, input)).text;
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      if (path === undefined || e.shown === null) throw new ResultError(e.message);
      throw new ResultError(
        `${e.message}\n\nWith this memory tool, create, insert and delete are that memory_consolidate: each rewrites the whole file. ` +
          `Once you have read ${path} as it is now (above, or view ${path}), write it again with everything that should stay.`,
      );
    }
  }
}

function withheld(path, file, findings) {
  const where = findings.map((f) => `line ${f.line}: ${f.rule}`).join("; ");
  return new ResultError(
    `${path} is withheld from you: the memory audit found something in it (${where}), so its text is not shown and the memory tool cannot write it. ` +
      `Ask the user to review it (\`metis-memory audit ${file}\`).`,
  );
}

/** The lines of `text`, a final newline ending the last one rather than starting another. */
function linesOf(text) {
  if (text === "") return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

function numbered(lines, first) {
  return lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join("\n");
}

/** `view_range` as the first and last line to show (`-1`: to the end), or a refusal. */
function lineRange(range, count, path) {
  const [first, last] = Array.isArray(range) && range.length === 2 ? range : [];
  const end = last === -1 ? count : last;
  if (!Number.isInteger(first) || !Number.isInteger(end) || first < 1 || first > count || end < first || end > count) {
    throw new ResultError(
      `Invalid view_range ${JSON.stringify(range)}: ${path} has ${count} lines; give [first, last] with 1 <= first <= last <= ${count}, or -1 for the last.`,
    );
  }
  return [first, end];
}
