// What the session tests share: a file version's hash, and a call that must be refused.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ToolError } from "metis-memory";

/** The SHA-256 of `text` as UTF-8, lowercase hex: a file version. */
export const sha256 = (text) => createHash("sha256").update(text).digest("hex");

/** The ToolError `promise` rejects with; fails the test if it resolves. */
export const refusal = (promise) =>
  promise.then(
    (value) => assert.fail(`expected a ToolError, got ${JSON.stringify(value)}`),
    (e) => {
      assert.ok(e instanceof ToolError, String(e));
      return e;
    },
  );
