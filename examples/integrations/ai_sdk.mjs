// Memory in a Vercel AI SDK agent: two user turns of one conversation over a workspace's
// memory, with the memory tools, a system prompt that stays byte-identical (a snapshot
// session, so the provider's prompt cache keeps it) and what other sessions write shown
// at the start of the next user turn.
//
//   node ai_sdk.mjs --offline [--workspace DIR]    the AI SDK's mock model, no network or key
//   node ai_sdk.mjs [--workspace DIR] [--model ID] a model through the AI Gateway
//                                                   (AI_GATEWAY_API_KEY; default
//                                                   anthropic/claude-sonnet-5.5)
//
// Needs `npm install metis-memory ai`. Offline it works in a fresh temporary workspace
// unless given one (that has no memory yet), and checks what it left there.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { openWorkspace } from "metis-memory";
import { memoryPrepareStep, memoryTools, memoryUserTurn } from "metis-memory/integrations/ai";

const { values: args } = parseArgs({
  options: { offline: { type: "boolean" }, workspace: { type: "string" }, model: { type: "string" } },
});
const root = args.workspace ?? (args.offline ? fs.mkdtempSync(path.join(os.tmpdir(), "metis-ai-sdk-")) : process.cwd());
const ws = openWorkspace(root);
if (args.offline && ((await ws.exists("MEMORY.md")) || (await ws.exists("USER.md")))) {
  // The scripted model rewrites MEMORY.md without reading it.
  console.error(`${root} has memory already: run --offline in a workspace without any`);
  process.exit(2);
}
const session = ws.session({ snapshot: true });
const model = args.offline ? offlineModel() : (args.model ?? "anthropic/claude-sonnet-5.5");
const settings = {
  model,
  tools: await memoryTools(session),
  prepareStep: memoryPrepareStep(session, "You are a careful coding assistant. Keep the memory short and current."),
  stopWhen: stepCountIs(5),
};
console.log(`workspace: ${root}`);

const messages = [];
async function turn(text) {
  // What other sessions wrote since the model last saw the memory leads the user turn;
  // the system prompt is never composed again.
  messages.push({ role: "user", content: await memoryUserTurn(session, text) });
  console.log(`\n> ${messages.at(-1).content}`);
  const result = await generateText({ ...settings, messages });
  for (const step of result.steps) {
    for (const call of step.toolCalls) console.log(`  ${call.toolName} ${JSON.stringify(call.input)}`);
    for (const { output } of step.toolResults) console.log(`    ${output.isError ? "refused" : "ok"}: ${output.text}`);
  }
  console.log(result.text);
  messages.push(...result.response.messages);
}

await turn("I like short answers. This project builds with `cargo build --release`.");
if (args.offline) {
  // Meanwhile another conversation in the same workspace remembers something.
  await ws.addEntry("MEMORY.md", "- tests: scripts/test");
}
await turn("Please tidy up the memory of this workspace.");

for (const file of ["USER.md", "MEMORY.md"]) console.log(`\n${file}:\n${await ws.read(file)}`);
if (args.offline) {
  const expected = "- build: `cargo build --release`\n- test: `scripts/test`\n";
  if ((await ws.read("MEMORY.md")) !== expected || (await ws.read("USER.md")) !== "- likes short answers\n") {
    console.error("the offline run left other memory than it should have");
    process.exit(1);
  }
}

/** The AI SDK's mock model, answering as a model would: the memory tool calls of each
 * response, then a reply. Its consolidate builds on the entry the other conversation
 * wrote, which it read at the start of the second user turn. */
function offlineModel() {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
  const responses = [
    [
      ["memory_add", { file: "USER.md", entry: "- likes short answers" }],
      ["memory_add", { file: "MEMORY.md", entry: "- builds with `cargo build --release`" }],
    ],
    "Noted.",
    [
      [
        "memory_consolidate",
        { file: "MEMORY.md", content: "- build: `cargo build --release`\n- test: `scripts/test`\n" },
      ],
    ],
    "Done: two lines.",
  ];
  let next = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const response = responses[next++];
      if (typeof response === "string") {
        return {
          content: [{ type: "text", text: response }],
          finishReason: { unified: "stop", raw: "end_turn" },
          usage,
          warnings: [],
        };
      }
      const content = response.map(([toolName, input], i) => ({
        type: "tool-call",
        toolCallId: `call_${next}_${i}`,
        toolName,
        input: JSON.stringify(input),
      }));
      return { content, finishReason: { unified: "tool-calls", raw: "tool_use" }, usage, warnings: [] };
    },
  });
}
