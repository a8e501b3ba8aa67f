// Types for metis-memory/integrations/ai: the Vercel AI SDK over a memory session.

import type { Tool } from "ai";
import type { MemoryEvent, Session } from "../index.js";

/** A file the model names in a memory tool call. */
export type ToolFileName = "MEMORY.md" | "USER.md";

/** What one memory tool call gave: the model reads `text`, as an error result when
 * `isError` (a refusal, which changed nothing). `events` are the write's
 * (`memory.updated`, then `memory.eviction` when over the soft cap), for the host to
 * publish; none for a refusal. */
export interface MemoryToolOutput {
  isError: boolean;
  text: string;
  events: MemoryEvent[];
}

/** The three memory tools as AI SDK tools, their descriptions and input schemas the
 * component's. (A type, not an interface, so that it is a `ToolSet`.) */
export type MemoryTools = {
  memory_add: Tool<{ file: ToolFileName; entry: string }, MemoryToolOutput>;
  memory_replace: Tool<{ file: ToolFileName; old: string; new: string }, MemoryToolOutput>;
  memory_consolidate: Tool<{ file: ToolFileName; content: string }, MemoryToolOutput>;
};

/** The memory tools for `generateText`, `streamText` or an Agent, each call run in
 * `session` (held to what its model has seen), the calls of one model response in the
 * order the model emitted them; a call of a later step first tells the session that the
 * model has read the results of the one before. */
export function memoryTools(session: Session): Promise<MemoryTools>;

/** The system prompt for the next model call: `base`, then the memory. In a snapshot
 * session, the same text for the whole conversation. */
export function memorySystem(session: Session, base?: string): Promise<string>;

/** A `prepareStep` giving every model call the system prompt with memory
 * ({@link memorySystem}). */
export function memoryPrepareStep(session: Session, base?: string): () => Promise<{ system: string }>;

/** The next user turn's text: in a snapshot session, what others wrote since the model
 * last saw each file (if anything), then `text`; in any other session, `text`. What it
 * adds counts as shown, so it must reach the model. */
export function memoryUserTurn(session: Session, text: string): Promise<string>;
