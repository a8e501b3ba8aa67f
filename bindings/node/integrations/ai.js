// The Vercel AI SDK (`ai`, an optional peer dependency) over a memory session. Every
// memory rule is the component's, through the session; this module only decides what the
// AI SDK makes its own: which tool calls belong to one model response (a step: the AI SDK
// hands every call of a step the same `messages` array, and each step a new one), the
// order a response's calls run in (the order the AI SDK starts them, which is the order
// the model emitted them), where the system prompt is composed (before each model call,
// `prepareStep`) and where a snapshot session's update goes (at the start of the next
// user turn).

import { jsonSchema, tool } from "ai";
import { ToolError } from "../errors.js";
import { serially } from "./serial.js";

/** The `messages` of the step whose calls each session ran last. */
const stepOf = new WeakMap();

/** The three memory tools (`memory_add`, `memory_replace`, `memory_consolidate`) as AI SDK
 * tools whose calls run in `session`: their descriptions and input schemas are the
 * component's. Each call's output is `{ isError, text, events }`; the model reads `text`,
 * as an error result when the call was refused (`isError`, nothing was written). */
export async function memoryTools(session) {
  const definitions = await session.workspace.toolDefinitions();
  return Object.fromEntries(
    definitions.map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema(definition.input_schema),
        execute: (input, options) => serially(session, () => call(session, definition.name, input, options)),
        toModelOutput: ({ output }) => ({ type: output.isError ? "error-text" : "text", value: output.text }),
      }),
    ]),
  );
}

async function call(session, name, input, { messages } = {}) {
  // A call of a step after the one the session last ran calls of: the model wrote it
  // having read that step's results, refusals included.
  if (messages !== undefined && stepOf.get(session) !== messages) {
    stepOf.set(session, messages);
    await session.nextResponse();
  }
  try {
    const { text, events } = await session.callTool(name, input);
    return { isError: false, text, events };
  } catch (e) {
    // A refusal is the model's to read; a failure (a trap, an unusable workspace) is not.
    if (!(e instanceof ToolError)) throw e;
    return { isError: true, text: e.message, events: [] };
  }
}

/** The system prompt for the next model call: `base`, then the memory. In a snapshot
 * session, the same text for the whole conversation. */
export async function memorySystem(session, base = "") {
  return serially(session, async () => (await session.systemPrompt(base)).text);
}

/** A `prepareStep` that gives every model call of `generateText`, `streamText` or an
 * Agent the system prompt with memory (`memorySystem`): composed afresh for each call in
 * a session, the same text throughout in a snapshot session. */
export function memoryPrepareStep(session, base = "") {
  return async () => ({ system: await memorySystem(session, base) });
}

/** The next user turn's text: in a snapshot session, what other sessions or people wrote
 * since the model last saw each file, if anything, then `text`; in any other session
 * `text` as it is, since the next system prompt shows the memory as it is. What it adds
 * counts as shown, so the text must reach the model. */
export async function memoryUserTurn(session, text) {
  if (!session.snapshot) return text;
  const update = await serially(session, () => session.memoryUpdate());
  return update === null ? text : `${update}\n\n${text}`;
}
