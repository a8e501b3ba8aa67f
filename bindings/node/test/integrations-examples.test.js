// The examples of examples/integrations, run offline (each framework's own mock model or
// a fake Messages API) as a person would run them, against the installed package:
// scripts/test-node copies them next to it. Each checks the memory it leaves and exits 1
// when it is not what its scripted conversation should leave; these check the exit, the
// files and what the run showed.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const install = process.env.METIS_NODE_INSTALL_DIR;

function run(t, example) {
  assert.ok(install, "METIS_NODE_INSTALL_DIR is not set: run this suite through scripts/test-node");
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-example-"));
  t.after(() => fs.rmSync(workspace, { recursive: true, force: true }));
  const script = path.join(install, "examples", example);
  assert.ok(fs.existsSync(script), `${script} is missing`);
  const result = spawnSync(process.execPath, [script, "--offline", "--workspace", workspace], {
    cwd: install,
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(result.status, 0, `${example} exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  const file = (name) => fs.readFileSync(path.join(workspace, ".metis", name), "utf8");
  return { stdout: result.stdout, stderr: result.stderr, file, workspace };
}

test("examples/integrations/ai_sdk.mjs runs offline: memory tools, a snapshot prompt and another session's write", (t) => {
  const { stdout, stderr, file } = run(t, "ai_sdk.mjs");
  assert.equal(file("USER.md"), "- likes short answers\n");
  assert.equal(file("MEMORY.md"), "- build: `cargo build --release`\n- test: `scripts/test`\n");
  assert.match(stdout, /memory_add \{"file":"MEMORY.md"/);
  // The other session's entry reached the model at the start of the second turn.
  assert.match(
    stdout,
    /> \[metis-memory: memory changed since it was last shown[^]*- tests: scripts\/test[^]*Please tidy up/,
  );
  assert.equal(stderr, "");
});

test("examples/integrations/claude_memory_tool.mjs runs offline: a create of a file not viewed is refused, then it goes through", (t) => {
  const { stdout, stderr, file } = run(t, "claude_memory_tool.mjs");
  assert.equal(file("MEMORY.md"), "- tests: scripts/test\n- build: `cargo build --release`\n");
  assert.equal(file("USER.md"), "- wants builds remembered\n");
  assert.match(stdout, /refused: You have not been shown MEMORY\.md in this conversation/);
  assert.equal(stderr, "");
});

test("an offline example refuses a workspace that has memory already, and leaves it as it was", (t) => {
  assert.ok(install, "METIS_NODE_INSTALL_DIR is not set: run this suite through scripts/test-node");
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-example-"));
  t.after(() => fs.rmSync(workspace, { recursive: true, force: true }));
  fs.mkdirSync(path.join(workspace, ".metis"));
  fs.writeFileSync(path.join(workspace, ".metis", "MEMORY.md"), "- mine\n");
  for (const example of ["ai_sdk.mjs", "claude_memory_tool.mjs"]) {
    const result = spawnSync(
      process.execPath,
      [path.join(install, "examples", example), "--offline", "--workspace", workspace],
      {
        cwd: install,
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    assert.equal(result.status, 2, `${example}: ${result.stdout}${result.stderr}`);
    assert.match(result.stderr, /has memory already/);
    assert.equal(fs.readFileSync(path.join(workspace, ".metis", "MEMORY.md"), "utf8"), "- mine\n");
  }
});
