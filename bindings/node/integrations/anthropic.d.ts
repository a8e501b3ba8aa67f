// Types for metis-memory/integrations/anthropic: Claude's memory tool over a memory
// session, for the Anthropic TypeScript SDK's tool runner.

import type { MemoryToolHandlers } from "@anthropic-ai/sdk/helpers/beta/memory";
import type { BetaRunnableTool } from "@anthropic-ai/sdk/lib/tools/BetaRunnableTool";
import type {
  BetaMemoryTool20250818,
  BetaMemoryTool20250818Command,
  BetaMemoryTool20250818CreateCommand,
  BetaMemoryTool20250818DeleteCommand,
  BetaMemoryTool20250818InsertCommand,
  BetaMemoryTool20250818RenameCommand,
  BetaMemoryTool20250818StrReplaceCommand,
  BetaMemoryTool20250818ViewCommand,
} from "@anthropic-ai/sdk/resources/beta";
import type { Session } from "../index.js";

/** Claude's memory tool (`memory_20250818`) over `session`: `/memories` holds exactly
 * `/memories/MEMORY.md` and `/memories/USER.md`. `view` of a file shows it (it counts as
 * shown); `create` and `delete` (the file emptied) are `memory_consolidate`, `insert` a
 * `memory_consolidate` of the file as it is now with the lines added, `str_replace` is
 * `memory_replace`, all held to what the model has seen; `rename` and every other path
 * are refused. A refusal is a tool result with `is_error`, thrown as the SDK's
 * `ToolError`, which the runner catches. */
export declare class MetisMemoryTool implements MemoryToolHandlers {
  constructor(session: Session);
  readonly session: Session;
  /** The tool for `client.beta.messages.toolRunner({ tools: [memory.tool()] })`. */
  tool(extraProps?: Omit<BetaMemoryTool20250818, "type" | "name">): BetaRunnableTool<BetaMemoryTool20250818Command>;
  /** The runner's items, each once the session has been told a new model response
   * begins: iterate the runner through this. */
  responses<T>(runner: AsyncIterable<T>): AsyncGenerator<T, void, undefined>;
  view(command: BetaMemoryTool20250818ViewCommand): Promise<string>;
  create(command: BetaMemoryTool20250818CreateCommand): Promise<string>;
  str_replace(command: BetaMemoryTool20250818StrReplaceCommand): Promise<string>;
  insert(command: BetaMemoryTool20250818InsertCommand): Promise<string>;
  delete(command: BetaMemoryTool20250818DeleteCommand): Promise<string>;
  rename(command: BetaMemoryTool20250818RenameCommand): Promise<string>;
}
