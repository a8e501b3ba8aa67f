// Conversions between the component's values (jco's representation of the WIT types)
// and this package's: plain objects with the spec's names, checked on the way in.

/** The name the user's own USER.md goes by (global user memory: `global-user` in
 * `wit/types.wit`), as the component's texts call it. */
export const GLOBAL_USER_FILE = "~/.metis/USER.md";

const WIT_FILE = Object.freeze({ "MEMORY.md": "memory", "USER.md": "user", [GLOBAL_USER_FILE]: "global-user" });

export const FILE_NAME = Object.freeze({ memory: "MEMORY.md", user: "USER.md", "global-user": GLOBAL_USER_FILE });

// The short names the CLI takes, in any case, so that a name that works at the terminal
// works here (tests/surfaces/file_names.json).
const SHORT_NAME = Object.freeze({ memory: "memory", user: "user", "global-user": "global-user" });

export function witFile(file) {
  let wit = Object.hasOwn(WIT_FILE, file) ? WIT_FILE[file] : undefined;
  if (wit === undefined && typeof file === "string" && Object.hasOwn(SHORT_NAME, file.toLowerCase())) {
    wit = SHORT_NAME[file.toLowerCase()];
  }
  if (wit === undefined) {
    throw new TypeError(
      `file must be "MEMORY.md", "USER.md" or "${GLOBAL_USER_FILE}" (or memory, user, global-user), got ${JSON.stringify(file)}`,
    );
  }
  return wit;
}

export function text(value, what) {
  if (typeof value !== "string") {
    throw new TypeError(`${what} must be a string, got ${typeof value}`);
  }
  return value;
}

export function writeResult(r) {
  return {
    file: FILE_NAME[r.file],
    beforeHash: r.beforeHash,
    afterHash: r.afterHash,
    beforeSizeBytes: Number(r.beforeSizeBytes),
    afterSizeBytes: Number(r.afterSizeBytes),
    overSoftCap: r.overSoftCap,
    overHardCap: r.overHardCap,
  };
}

export function finding(f) {
  return { line: f.line, rule: f.rule, detail: f.detail };
}

function event(e) {
  if (e.tag === "updated") {
    return {
      type: "memory.updated",
      payload: {
        file: FILE_NAME[e.val.file],
        operation: e.val.operation,
        before_hash: e.val.beforeHash,
        after_hash: e.val.afterHash,
        before_size_bytes: Number(e.val.beforeSizeBytes),
        after_size_bytes: Number(e.val.afterSizeBytes),
      },
    };
  }
  return {
    type: "memory.eviction",
    payload: {
      file: FILE_NAME[e.val.file],
      trigger: e.val.trigger.replaceAll("-", "_"),
      entries_evicted: e.val.entriesEvicted,
      size_before_bytes: Number(e.val.sizeBeforeBytes),
      size_after_bytes: Number(e.val.sizeAfterBytes),
    },
  };
}

export function toolSuccess(s) {
  return {
    text: s.text,
    operation: s.operation,
    result: writeResult(s.result),
    events: s.events.map(event),
  };
}

export function fileVersion(v) {
  return { file: FILE_NAME[v.file], sha256: v.sha256 };
}

export function composedPrompt(composed) {
  return {
    text: composed.text,
    sources: composed.sources.map((source) => ({
      file: FILE_NAME[source.file],
      sha256: source.sha256,
      sizeBytes: Number(source.sizeBytes),
      included: source.included,
      findings: source.findings.map(finding),
    })),
  };
}

/** A session as the component returned it, as this package shows it (`Session.state`). */
export function sessionState(session) {
  return Object.freeze({
    seen: Object.freeze(session.seen.map((v) => Object.freeze(fileVersion(v)))),
    withheld: Object.freeze(session.withheld.map((file) => FILE_NAME[file])),
    shown: Object.freeze(session.shown.map((v) => Object.freeze(fileVersion(v)))),
    ownWrites: Object.freeze(session.ownWrites.map((w) => Object.freeze(ownWrite(w)))),
  });
}

/** A write the model of a session made, as this package shows it. */
function ownWrite(w) {
  return { file: FILE_NAME[w.file], beforeSha256: w.beforeSha256, afterSha256: w.afterSha256 };
}

/** The session a sessionless tool call is held to: a model shown `seen` (nothing when
 * absent) with `withheld` kept from it, which has made no write yet. */
export function heldSession(seen, withheld) {
  return { seen: seenVersions(seen), withheld: (withheld ?? []).map(witFile), shown: [], ownWrites: [] };
}

/** No part of the poisoning scan: the plain write's policy (a person's or a host's own
 * write; the tools scan theirs). */
const NO_SCAN = Object.freeze({ invisibleCharacters: false, injectionPatterns: false });

/** How a workspace's own write (`store.workspace.write`) is made: as the plain write
 * (`add-entry`, `replace`, `consolidate`), and only while the file is still the version
 * `ifUnchanged` when given (`write-options`). */
export function writeOptions(ifUnchanged) {
  return { ifUnchanged, scan: NO_SCAN };
}

const AUDIT_POLICIES = ["off", "report", "omit", "refuse"];

export function auditPolicy(audit) {
  if (!AUDIT_POLICIES.includes(audit)) {
    throw new TypeError(`audit must be "off", "report", "omit" or "refuse", got ${JSON.stringify(audit)}`);
  }
  return audit;
}

/** The poisoning scan's parts: both on unless turned off. */
export function scanPolicy(scan) {
  return {
    invisibleCharacters: scan?.invisibleCharacters ?? true,
    injectionPatterns: scan?.injectionPatterns ?? true,
  };
}

export function toolInput(input) {
  return typeof input === "string" ? input : JSON.stringify(input);
}

export function seenVersions(seen) {
  if (seen === undefined) return [];
  const entries = Array.isArray(seen)
    ? seen.map((v) => [v.file, v.sha256])
    : Object.entries(seen);
  return entries.map(([file, sha256]) => ({ file: witFile(file), sha256: text(sha256, "sha256") }));
}
