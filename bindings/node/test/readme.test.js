// The repository README's JavaScript examples, against the installed tarball: every
// ```js block runs as an ES module placed in the install directory (so that
// `import "metis-memory"` resolves to the installed package), in a fresh temporary
// directory as its working directory, and leaves memory there. cli/tests/readme.rs
// covers the README's other blocks.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

function jsBlocks() {
  const root = process.env.METIS_REPO_ROOT;
  assert.ok(root, "METIS_REPO_ROOT is not set: run this suite through scripts/test-node");
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
  return [...readme.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```/gm)]
    .filter((m) => m[1] === "js")
    .map((m) => m[2]);
}

test("the README has JavaScript examples", () => {
  assert.ok(jsBlocks().length >= 1);
});

jsBlocks().forEach((code, i) => {
  test(`README js block ${i + 1} runs against the installed package`, (t) => {
    const install = process.env.METIS_NODE_INSTALL_DIR;
    assert.ok(install, "METIS_NODE_INSTALL_DIR is not set: run this suite through scripts/test-node");
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "metis-node-readme-"));
    const file = path.join(install, `readme-block-${i + 1}.mjs`);
    t.after(() => {
      fs.rmSync(cwd, { recursive: true, force: true });
      fs.rmSync(file, { force: true });
    });
    fs.writeFileSync(file, code);
    execFileSync(process.execPath, [file], { cwd, stdio: ["ignore", "inherit", "inherit"] });
    // Each file the example names was written.
    const named = ["MEMORY.md", "USER.md"].filter((name) => code.includes(name));
    assert.ok(named.length > 0);
    for (const name of named) assert.ok(fs.statSync(path.join(cwd, ".metis", name)).size > 0, name);
  });
});
