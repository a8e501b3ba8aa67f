// Claude's memory tool over a workspace's memory, with the Anthropic SDK's tool runner:
// /memories holds the workspace's MEMORY.md and USER.md, and a create (or insert or
// delete) of a file the model has not viewed is refused, showing it what is there.
//
//   node claude_memory_tool.mjs --offline [--workspace DIR]    a fake Messages API replying
//                                                               as Claude would, no network
//   node claude_memory_tool.mjs [--workspace DIR] [--model ID] Claude (ANTHROPIC_API_KEY;
//                                                               default claude-sonnet-5-5)
//
// Needs `npm install metis-memory @anthropic-ai/sdk`. Offline it works in a fresh
// temporary workspace holding one entry (or in DIR, which must have no memory yet), and
// checks what it left there.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import Anthropic from "@anthropic-ai/sdk";
import { openWorkspace } from "metis-memory";
import { MetisMemoryTool } from "metis-memory/integrations/anthropic";

const { values: args } = parseArgs({
  options: { offline: { type: "boolean" }, workspace: { type: "string" }, model: { type: "string" } },
});
const root = args.workspace ?? (args.offline ? fs.mkdtempSync(path.join(os.tmpdir(), "metis-claude-")) : process.cwd());
const ws = openWorkspace(root);
if (args.offline) {
  if ((await ws.exists("MEMORY.md")) || (await ws.exists("USER.md"))) {
    console.error(`${root} has memory already: run --offline in a workspace without any`);
    process.exit(2);
  }
  // What an earlier conversation left: the model has not seen it in this one.
  await ws.addEntry("MEMORY.md", "- tests: scripts/test");
}
console.log(`workspace: ${root}`);

const client = args.offline ? new Anthropic({ apiKey: "offline", fetch: offlineMessagesApi() }) : new Anthropic();
const memory = new MetisMemoryTool(ws.session());
const runner = client.beta.messages.toolRunner({
  model: args.model ?? "claude-sonnet-5-5",
  max_tokens: 2048,
  betas: ["context-management-2025-06-27"],
  system: "You are a careful coding assistant. Check /memories before you answer, and keep it short and current.",
  messages: [{ role: "user", content: "This project builds with `cargo build --release`; please remember that." }],
  tools: [memory.tool()],
});

// Through `responses`, so that each response's calls are judged by what the model had read.
for await (const message of memory.responses(runner)) {
  const results = await runner.generateToolResponse();
  const texts = new Map((results?.content ?? []).map((block) => [block.tool_use_id, block]));
  for (const block of message.content) {
    if (block.type === "text") console.log(`\n${block.text}`);
    if (block.type !== "tool_use") continue;
    const result = texts.get(block.id);
    console.log(`\n  memory ${JSON.stringify(block.input)}`);
    console.log(`    ${result.is_error ? "refused" : "ok"}: ${String(result.content).replaceAll("\n", "\n    ")}`);
  }
}

for (const file of ["USER.md", "MEMORY.md"]) console.log(`\n${file}:\n${await ws.read(file)}`);
if (args.offline) {
  const expected = "- tests: scripts/test\n- build: `cargo build --release`\n";
  if ((await ws.read("MEMORY.md")) !== expected || (await ws.read("USER.md")) !== "- wants builds remembered\n") {
    console.error("the offline run left other memory than it should have");
    process.exit(1);
  }
}

/** A fake Messages API for the client's `fetch`, replying as Claude would: it looks at
 * /memories, tries to rewrite MEMORY.md without reading it (refused: the refusal shows
 * the file), adds the line after what it was shown, and writes USER.md, which was empty. */
function offlineMessagesApi() {
  const replies = [
    [{ command: "view", path: "/memories" }],
    [{ command: "create", path: "/memories/MEMORY.md", file_text: "- build: `cargo build --release`\n" }],
    [
      {
        command: "insert",
        path: "/memories/MEMORY.md",
        insert_line: 1,
        insert_text: "- build: `cargo build --release`",
      },
      { command: "create", path: "/memories/USER.md", file_text: "- wants builds remembered\n" },
    ],
    "Remembered: `cargo build --release`.",
  ];
  let next = 0;
  return async (_url, init) => {
    const { model } = JSON.parse(init.body);
    const reply = replies[next++];
    const content =
      typeof reply === "string"
        ? [{ type: "text", text: reply }]
        : reply.map((input, i) => ({ type: "tool_use", id: `toolu_${next}_${i}`, name: "memory", input }));
    const message = {
      id: `msg_${next}`,
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: typeof reply === "string" ? "end_turn" : "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    return new Response(JSON.stringify(message), { headers: { "content-type": "application/json" } });
  };
}
