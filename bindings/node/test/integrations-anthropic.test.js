// metis-memory/integrations/anthropic (Claude's memory tool over a session) driven through
// the Anthropic SDK's own tool runner (`client.beta.messages.toolRunner`), against a fake
// Messages API passed as the client's `fetch`: it replies with the scripted tool_use
// blocks and records the tool_result blocks the runner sends back. Every row of the shared
// table (tests/integrations/claude_memory_tool.json, which the Python package runs too)
// runs once with plain replies and once streamed, with the runner starting each call while
// the reply streams.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { openWorkspace } from "metis-memory";
import { MetisMemoryTool } from "metis-memory/integrations/anthropic";

const ROOT = process.env.METIS_REPO_ROOT;
const TABLE =
  ROOT && JSON.parse(fs.readFileSync(path.join(ROOT, "tests", "integrations", "claude_memory_tool.json"), "utf8"));

function workspace(t, files = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-claude-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const metis = path.join(root, ".metis");
  fs.mkdirSync(metis);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(metis, name), text);
  const file = (name) =>
    fs.existsSync(path.join(metis, name)) ? fs.readFileSync(path.join(metis, name), "utf8") : null;
  return { root, file };
}

/** A fake Messages API: reply `n` (from 0) holds one tool_use block of the memory tool
 * for each input of `responses[n]`, and past the end a final text. `beforeReply(n)` runs
 * once the request for reply `n` has arrived (so reply `n - 1`'s results were sent) and
 * before the reply goes out. Streams its replies when the request asks to. */
function fakeMessagesApi(responses, beforeReply = async () => {}) {
  const requests = [];
  const fetch = async (url, init) => {
    const body = JSON.parse(init.body);
    const n = requests.length;
    requests.push(body);
    await beforeReply(n);
    const inputs = responses[n];
    const content = inputs
      ? inputs.map((input, i) => ({ type: "tool_use", id: `toolu_${n}_${i}`, name: "memory", input }))
      : [{ type: "text", text: "Done." }];
    const message = {
      id: `msg_${n}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: inputs ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    if (!body.stream) return new Response(JSON.stringify(message), { headers: { "content-type": "application/json" } });
    return new Response(sse(message), { headers: { "content-type": "text/event-stream" } });
  };
  /** The tool_result blocks sent for reply `n`'s calls, by tool_use id. */
  const resultsOf = (n) => {
    const request = requests[n + 1];
    assert.ok(request, `no request followed reply ${n}`);
    const turn = request.messages.at(-1);
    assert.equal(turn.role, "user");
    return new Map(
      turn.content.filter((block) => block.type === "tool_result").map((block) => [block.tool_use_id, block]),
    );
  };
  return { fetch, requests, resultsOf };
}

/** `message` as the Messages API streams it: each tool_use's input as one JSON delta. */
function sse(message) {
  const events = [
    { type: "message_start", message: { ...message, content: [], stop_reason: null } },
    ...message.content.flatMap((block, index) =>
      block.type === "tool_use"
        ? [
            { type: "content_block_start", index, content_block: { ...block, input: {} } },
            {
              type: "content_block_delta",
              index,
              delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
            },
            { type: "content_block_stop", index },
          ]
        : [
            { type: "content_block_start", index, content_block: { type: "text", text: "" } },
            { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } },
            { type: "content_block_stop", index },
          ],
    ),
    {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: 1 },
    },
    { type: "message_stop" },
  ];
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
}

/** Runs the conversation: the runner over `api`, with the memory tool on `session`,
 * iterated through the tool's `responses`. */
async function converse(session, api, { stream = false } = {}) {
  const client = new Anthropic({ apiKey: "offline", fetch: api.fetch, maxRetries: 0 });
  const memory = new MetisMemoryTool(session);
  const runner = client.beta.messages.toolRunner({
    model: "claude-offline",
    max_tokens: 1024,
    messages: [{ role: "user", content: "Keep the memory up to date." }],
    tools: [memory.tool()],
    ...(stream ? { stream: true, runToolsEagerly: true } : {}),
  });
  for await (const item of memory.responses(runner)) if (stream) await item.finalMessage();
}

const text = (block) =>
  typeof block.content === "string" ? block.content : block.content.map((c) => c.text ?? "").join("");

/** Fails, naming it, on a key the table's format (tests/integrations/README.md) does not have. */
function known(value, keys, where) {
  for (const key of Object.keys(value)) assert.ok(keys.includes(key), `${where}: unknown key ${JSON.stringify(key)}`);
}

test("the shared table is there, in the format this driver reads", () => {
  assert.ok(ROOT, "METIS_REPO_ROOT is not set: run this suite through scripts/test-node");
  known(TABLE, ["tool", "rows"], "the table");
  assert.equal(TABLE.tool, "memory_20250818");
  assert.ok(TABLE.rows.length >= 20, `only ${TABLE.rows.length} rows`);
});

for (const stream of [false, true]) {
  for (const row of TABLE?.rows ?? []) {
    test(`table${stream ? " (streamed)" : ""}: ${row.name}`, async (t) => {
      known(row, ["name", "given", "responses", "after"], row.name);
      const { root, file } = workspace(t, row.given);
      const ws = openWorkspace(root);
      for (const response of row.responses) {
        known(response, ["others_add", "calls"], row.name);
        for (const call of response.calls) known(call, ["input", "is_error", "contains", "lacks"], row.name);
      }
      const api = fakeMessagesApi(
        row.responses.map((response) => response.calls.map((call) => call.input)),
        async (n) => {
          for (const add of row.responses[n]?.others_add ?? []) {
            known(add, ["file", "entry"], row.name);
            await ws.addEntry(add.file, add.entry);
          }
        },
      );
      await converse(ws.session(), api, { stream });

      assert.deepEqual(api.requests[0].tools, [{ type: TABLE.tool, name: "memory" }]);
      row.responses.forEach((response, n) => {
        const results = api.resultsOf(n);
        assert.equal(results.size, response.calls.length);
        response.calls.forEach((call, i) => {
          const block = results.get(`toolu_${n}_${i}`);
          const where = `reply ${n}, call ${i} (${JSON.stringify(call.input)}): ${text(block)}`;
          assert.equal(block.is_error === true, call.is_error, where);
          for (const part of call.contains ?? [])
            assert.ok(text(block).includes(part), `${where}\nlacks ${JSON.stringify(part)}`);
          for (const part of call.lacks ?? [])
            assert.ok(!text(block).includes(part), `${where}\nholds ${JSON.stringify(part)}`);
        });
      });
      for (const [name, expected] of Object.entries(row.after)) assert.equal(file(name), expected, name);
    });
  }
}

test("a response's commands run whole and in the order the model emitted them", async (t) => {
  const { root, file } = workspace(t, { "MEMORY.md": "- a\n- c\n" });
  // The inserts read the file and write it whole: were the replace between them to run
  // between an insert's read and its write, that write would drop it.
  const api = fakeMessagesApi([
    [{ command: "view", path: "/memories/MEMORY.md" }],
    [
      { command: "insert", path: "/memories/MEMORY.md", insert_line: 1, insert_text: "- b" },
      { command: "str_replace", path: "/memories/MEMORY.md", old_str: "- c", new_str: "- d" },
      { command: "insert", path: "/memories/MEMORY.md", insert_line: 0, insert_text: "# facts\n" },
      { command: "str_replace", path: "/memories/MEMORY.md", old_str: "- a\n- b", new_str: "- a, b" },
    ],
  ]);
  await converse(openWorkspace(root).session(), api);
  assert.deepEqual(
    [...api.resultsOf(1).values()].map((block) => block.is_error === true),
    [false, false, false, false],
  );
  assert.equal(file("MEMORY.md"), "# facts\n- a, b\n- d\n");
});

test("the runner sends the view's text as it is, and each refusal as an is_error result, never a thrown error", async (t) => {
  const { root } = workspace(t, { "MEMORY.md": "- a\n- b\n" });
  const api = fakeMessagesApi([
    [
      { command: "view", path: "/memories/MEMORY.md" },
      { command: "create", path: "/memories/notes.md", file_text: "- x\n" },
    ],
  ]);
  await converse(openWorkspace(root).session(), api);
  const [view, refused] = [...api.resultsOf(0).values()];
  assert.equal(view.content, "Here's the content of /memories/MEMORY.md with line numbers:\n     1\t- a\n     2\t- b");
  assert.equal(view.is_error, undefined);
  assert.equal(refused.is_error, true);
  // The text is the tool's own, not the runner's "Error: …" of an exception it caught.
  assert.match(refused.content, /^"\/memories\/notes\.md" is not a memory file/);
});

test("with global user memory written by the agent, /memories/USER.md is the user's own file", async (t) => {
  const { root, file } = workspace(t, { "USER.md": "- the workspace's\n" });
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-claude-home-"));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.mkdirSync(path.join(home, ".metis"), { mode: 0o700 });
  fs.writeFileSync(path.join(home, ".metis", "USER.md"), "- name: Sam\n");
  const ws = openWorkspace(root, { globalUser: { dir: path.join(home, ".metis"), agentWrites: true } });
  const api = fakeMessagesApi([
    [
      { command: "view", path: "/memories" },
      { command: "view", path: "/memories/USER.md" },
    ],
    [{ command: "insert", path: "/memories/USER.md", insert_line: 1, insert_text: "- likes tea" }],
  ]);
  await converse(ws.session(), api);
  const [listing, view] = [...api.resultsOf(0).values()].map(text);
  assert.match(listing, /\/memories\/USER\.md: 12 bytes \(soft cap 1536, hard cap 3072\)/);
  assert.match(view, /1\t- name: Sam/);
  assert.equal(api.resultsOf(1).get("toolu_1_0").is_error, undefined, text(api.resultsOf(1).get("toolu_1_0")));
  assert.equal(fs.readFileSync(path.join(home, ".metis", "USER.md"), "utf8"), "- name: Sam\n- likes tea\n");
  assert.equal(file("USER.md"), "- the workspace's\n");
});
