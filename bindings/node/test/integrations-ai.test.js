// metis-memory/integrations/ai driven through the Vercel AI SDK's own tool loop
// (`generateText`, `streamText`) by its mock model (`MockLanguageModelV3`, `ai/test`),
// which answers each model call with the next scripted response: the tool calls go through
// the AI SDK's parsing and execution, and what the model reads back is what the AI SDK
// puts in the next call's prompt.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generateText, stepCountIs, streamText } from "ai";
import { MockLanguageModelV3, convertArrayToReadableStream } from "ai/test";
import { openWorkspace } from "metis-memory";
import { memoryPrepareStep, memorySystem, memoryTools, memoryUserTurn } from "metis-memory/integrations/ai";

function workspace(t, files = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-ai-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const metis = path.join(root, ".metis");
  fs.mkdirSync(metis);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(metis, name), text);
  return { root, file: (name) => fs.readFileSync(path.join(metis, name), "utf8") };
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A mock model answering its calls with `responses` in turn: each a list of tool calls
 * (`[toolName, input]`) or a final text; past the end, "done". */
function scripted(responses) {
  let next = 0;
  const take = () => {
    const response = responses[next++] ?? "done";
    const calls = typeof response === "string" ? [] : response;
    const parts = calls.map(([toolName, input], i) => ({
      type: "tool-call",
      toolCallId: `call_${next}_${i}`,
      toolName,
      input: JSON.stringify(input),
    }));
    if (typeof response === "string") parts.push({ type: "text", text: response });
    const finishReason = { unified: calls.length > 0 ? "tool-calls" : "stop", raw: undefined };
    return { parts, finishReason };
  };
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const { parts, finishReason } = take();
      return { content: parts, finishReason, usage, warnings: [] };
    },
    doStream: async () => {
      const { parts, finishReason } = take();
      const chunks = parts.flatMap((part, i) =>
        part.type === "text"
          ? [
              { type: "text-start", id: `t${i}` },
              { type: "text-delta", id: `t${i}`, delta: part.text },
              { type: "text-end", id: `t${i}` },
            ]
          : [part],
      );
      return {
        stream: convertArrayToReadableStream([
          { type: "stream-start", warnings: [] },
          ...chunks,
          { type: "finish", finishReason, usage },
        ]),
      };
    },
  });
}

/** The tool results the model was sent in its call `n` (from 0), in order: `[toolName,
 * output type, text]`. */
function resultsSent(model, n, calls = model.doGenerateCalls) {
  const tool = calls[n].prompt.at(-1);
  assert.equal(tool.role, "tool");
  return tool.content.map((part) => [part.toolName, part.output.type, part.output.value]);
}

test("the tools are the component's definitions, and a response's calls run in the order the model emitted them", async (t) => {
  const { root, file } = workspace(t, { "MEMORY.md": "- a\n" });
  const ws = openWorkspace(root);
  const session = ws.session();
  const model = scripted([
    [
      ["memory_add", { file: "MEMORY.md", entry: "- b" }],
      // Each needs the one before it to have run: the replace finds "- b" only after the
      // add, and the consolidate is held to the version the replace left.
      ["memory_replace", { file: "MEMORY.md", old: "- b", new: "- c" }],
      ["memory_add", { file: "MEMORY.md", entry: "- d" }],
    ],
  ]);
  const result = await generateText({
    model,
    tools: await memoryTools(session),
    prepareStep: memoryPrepareStep(session, "You are careful."),
    prompt: "Remember b, then make it c, then remember d.",
    stopWhen: stepCountIs(3),
  });

  const definitions = await ws.toolDefinitions();
  assert.deepEqual(
    model.doGenerateCalls[0].tools.map(({ type, name, description, inputSchema }) => ({
      type,
      name,
      description,
      inputSchema,
    })),
    definitions.map(({ name, description, input_schema }) => ({
      type: "function",
      name,
      description,
      inputSchema: input_schema,
    })),
  );
  assert.equal(file("MEMORY.md"), "- a\n- c\n- d\n");
  assert.deepEqual(resultsSent(model, 1), [
    ["memory_add", "text", "appended to MEMORY.md (8 bytes total)"],
    ["memory_replace", "text", "replaced in MEMORY.md (8 bytes total)"],
    ["memory_add", "text", "appended to MEMORY.md (12 bytes total)"],
  ]);
  const outputs = result.steps[0].toolResults.map((r) => r.output);
  assert.deepEqual(
    outputs.map((o) => o.isError),
    [false, false, false],
  );
  assert.deepEqual(
    outputs[0].events.map((e) => [e.type, e.payload.operation]),
    [["memory.updated", "add"]],
  );
  // A session composes the prompt afresh for every model call.
  assert.equal(model.doGenerateCalls[0].prompt[0].content, "You are careful.\n\n## Workspace memory (MEMORY.md)\n- a");
  assert.equal(
    model.doGenerateCalls[1].prompt[0].content,
    "You are careful.\n\n## Workspace memory (MEMORY.md)\n- a\n- c\n- d",
  );
});

test("a refusal is an error result the model reads; what it showed counts from the next step on, not within its own", async (t) => {
  const { root, file } = workspace(t, { "MEMORY.md": "- a\n" });
  const ws = openWorkspace(root);
  const session = ws.session({ snapshot: true });
  // A system prompt given once, no prepareStep: the tools alone tell the steps apart.
  const system = await memorySystem(session, "You are careful.");
  await ws.addEntry("MEMORY.md", "- other");
  const stale = { file: "MEMORY.md", content: "- a\n- mine\n" };
  const merged = { file: "MEMORY.md", content: "- a\n- other\n- mine\n" };
  const model = scripted([
    [
      ["memory_consolidate", stale],
      ["memory_consolidate", stale],
    ],
    [["memory_consolidate", merged]],
  ]);
  const result = await generateText({
    model,
    system,
    tools: await memoryTools(session),
    prompt: "Remember mine.",
    stopWhen: stepCountIs(4),
  });

  const [first, second] = resultsSent(model, 1);
  assert.equal(first[1], "error-text");
  assert.match(first[2], /changed since you last saw it.*nothing was written/s);
  assert.match(first[2], /- other/);
  // Written before the model read the first refusal, so still held to what it saw.
  assert.equal(second[1], "error-text");
  assert.match(second[2], /nothing was written/);
  assert.deepEqual(resultsSent(model, 2), [["memory_consolidate", "text", "consolidated MEMORY.md: 12 → 19 bytes"]]);
  assert.equal(file("MEMORY.md"), "- a\n- other\n- mine\n");
  // Refusals are results, never the AI SDK's tool errors.
  for (const step of result.steps) assert.ok(!step.content.some((part) => part.type === "tool-error"));
  assert.deepEqual(
    result.steps.flatMap((step) => step.toolResults.map((r) => r.output.isError)),
    [true, true, false],
  );
  assert.deepEqual(result.steps[0].toolResults[0].output.events, []);
});

test("a snapshot session keeps the system prompt byte-identical; others' writes lead the next user turn", async (t) => {
  const { root, file } = workspace(t, { "MEMORY.md": "- a\n" });
  const ws = openWorkspace(root);
  const session = ws.session({ snapshot: true });
  const model = scripted([
    "Noted.",
    [["memory_consolidate", { file: "MEMORY.md", content: "- a\n- other\n- mine\n" }]],
    "Done.",
  ]);
  const settings = {
    model,
    tools: await memoryTools(session),
    prepareStep: memoryPrepareStep(session, "You are careful."),
    stopWhen: stepCountIs(3),
  };
  const first = await generateText({
    ...settings,
    messages: [{ role: "user", content: await memoryUserTurn(session, "Hello.") }],
  });
  await ws.addEntry("MEMORY.md", "- other");
  const turn = await memoryUserTurn(session, "Remember mine.");
  assert.match(turn, /^\[metis-memory: memory changed since it was last shown/);
  assert.match(turn, /- other\n/);
  assert.ok(turn.endsWith("\n\nRemember mine."));
  const second = await generateText({
    ...settings,
    messages: [{ role: "user", content: "Hello." }, ...first.response.messages, { role: "user", content: turn }],
  });

  const systems = model.doGenerateCalls.map((call) => call.prompt[0]);
  assert.equal(systems.length, 3);
  for (const system of systems)
    assert.deepEqual(system, { role: "system", content: "You are careful.\n\n## Workspace memory (MEMORY.md)\n- a" });
  // The update counts as shown: the model's consolidate built on it goes through.
  assert.deepEqual(
    second.steps[0].toolResults.map((r) => r.output.isError),
    [false],
  );
  assert.equal(file("MEMORY.md"), "- a\n- other\n- mine\n");
  // Nothing changed since: no update, the turn as it is.
  assert.equal(await memoryUserTurn(session, "Thanks."), "Thanks.");
});

test("a session that is not a snapshot leaves the user turn as it is: the next prompt shows the memory", async (t) => {
  const { root } = workspace(t, { "MEMORY.md": "- a\n" });
  const ws = openWorkspace(root);
  const session = ws.session();
  await memorySystem(session);
  await ws.addEntry("MEMORY.md", "- other");
  assert.equal(await memoryUserTurn(session, "Hello."), "Hello.");
  assert.equal(await memorySystem(session), "## Workspace memory (MEMORY.md)\n- a\n- other");
});

test("streamText runs a streamed response's calls in the order they streamed", async (t) => {
  const { root, file } = workspace(t, { "MEMORY.md": "- a\n" });
  const session = openWorkspace(root).session();
  const model = scripted([
    [
      ["memory_replace", { file: "MEMORY.md", old: "- a", new: "- b" }],
      ["memory_consolidate", { file: "MEMORY.md", content: "- b\n- c\n" }],
      ["memory_replace", { file: "MEMORY.md", old: "- c", new: "- d" }],
    ],
  ]);
  const result = streamText({
    model,
    tools: await memoryTools(session),
    prepareStep: memoryPrepareStep(session, "You are careful."),
    prompt: "Rewrite the memory.",
    stopWhen: stepCountIs(3),
  });
  const steps = await result.steps;
  assert.equal(file("MEMORY.md"), "- b\n- d\n");
  assert.deepEqual(
    steps[0].toolResults.map((r) => [r.toolName, r.output.isError]),
    [
      ["memory_replace", false],
      ["memory_consolidate", false],
      ["memory_replace", false],
    ],
  );
  assert.deepEqual(
    resultsSent(model, 1, model.doStreamCalls).map(([name, type]) => [name, type]),
    [
      ["memory_replace", "text"],
      ["memory_consolidate", "text"],
      ["memory_replace", "text"],
    ],
  );
  assert.equal(
    model.doStreamCalls[1].prompt[0].content,
    "You are careful.\n\n## Workspace memory (MEMORY.md)\n- b\n- d",
  );
});
