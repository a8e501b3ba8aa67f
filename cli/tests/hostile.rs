//! A catalogue of hostile and broken inputs. Each gets a typed error and leaves every
//! byte on disk as it was, inside the workspace and outside it; nothing hangs.

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::{TestWorkspace, snapshot_of};
use metis_memory::json::error_json;
use metis_memory::{Error, Limits, MemoryFile, Workspace};
use serde_json::{Value, json};

const M: MemoryFile = MemoryFile::Memory;
const U: MemoryFile = MemoryFile::User;
const MB: usize = 1 << 20;

/// A workspace, and a directory beside it that the guest must never reach.
struct Env {
    t: TestWorkspace,
    outside: tempfile::TempDir,
}

impl Env {
    fn secret(&self) -> PathBuf {
        self.outside.path().join("secret.md")
    }
    fn metis(&self, name: &str) -> PathBuf {
        fs::create_dir_all(self.t.metis()).unwrap();
        self.t.metis().join(name)
    }
    fn ws(&self) -> &Workspace {
        &self.t.ws
    }
}

type Setup = fn(&Env);
type Act = fn(&Env) -> Result<(), Error>;

fn ok<T>(result: Result<T, Error>) -> Result<(), Error> {
    result.map(|_| ())
}

fn put(env: &Env, name: &str, bytes: &[u8]) {
    fs::write(env.metis(name), bytes).unwrap();
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn tool(env: &Env, name: &str, input: &str) -> Result<(), Error> {
    ok(env.ws().call_tool(name, input))
}

fn big(bytes: usize) -> String {
    "x".repeat(bytes)
}

/// (name, setup, action, the error expected: its `error_json`, matched key by key, where
/// `message_starts_with` and `message_ends_with` check part of the message)
const CATALOGUE: &[(&str, Setup, Act, &str)] = &[
    (
        "invalid UTF-8 file, add",
        |e| put(e, "MEMORY.md", b"ok \xff\n"),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "invalid-utf8", "file": "MEMORY.md", "offset": 3, "message": "MEMORY.md is not valid UTF-8 (first invalid byte at offset 3); only memory_consolidate can replace it"}"#,
    ),
    (
        "invalid UTF-8 file, replace",
        |e| put(e, "MEMORY.md", b"ok \xff\n"),
        |e| ok(e.ws().replace(M, "ok", "no")),
        r#"{"kind": "invalid-utf8", "file": "MEMORY.md", "offset": 3, "message": "MEMORY.md is not valid UTF-8 (first invalid byte at offset 3); only memory_consolidate can replace it"}"#,
    ),
    (
        "invalid UTF-8 file, read",
        |e| put(e, "USER.md", b"\xc3"),
        |e| ok(e.ws().read(U)),
        r#"{"kind": "invalid-utf8", "file": "USER.md", "offset": 0, "message": "USER.md is not valid UTF-8 (first invalid byte at offset 0); only memory_consolidate can replace it"}"#,
    ),
    (
        "invalid UTF-8 file, prompt",
        |e| put(e, "USER.md", b"\x80abc"),
        |e| ok(e.ws().assemble_system_prompt("b")),
        r#"{"kind": "invalid-utf8", "file": "USER.md", "offset": 0, "message": "USER.md is not valid UTF-8 (first invalid byte at offset 0); only memory_consolidate can replace it"}"#,
    ),
    (
        "overlong UTF-8 encoding",
        |e| put(e, "MEMORY.md", b"\xc0\x80"),
        |e| ok(e.ws().read(M)),
        r#"{"kind": "invalid-utf8", "file": "MEMORY.md", "offset": 0, "message": "MEMORY.md is not valid UTF-8 (first invalid byte at offset 0); only memory_consolidate can replace it"}"#,
    ),
    (
        "UTF-16 file with a BOM",
        |e| put(e, "MEMORY.md", b"\xff\xfeh\0i\0"),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "invalid-utf8", "file": "MEMORY.md", "offset": 0, "message": "MEMORY.md is not valid UTF-8 (first invalid byte at offset 0); only memory_consolidate can replace it"}"#,
    ),
    (
        "CESU-8 surrogate",
        |e| put(e, "MEMORY.md", b"\xed\xa0\x80"),
        |e| ok(e.ws().read(M)),
        r#"{"kind": "invalid-utf8", "file": "MEMORY.md", "offset": 0, "message": "MEMORY.md is not valid UTF-8 (first invalid byte at offset 0); only memory_consolidate can replace it"}"#,
    ),
    (
        "invalid UTF-8 file, memory_add tool",
        |e| put(e, "USER.md", b"\xfe"),
        |e| tool(e, "memory_add", r#"{"file":"USER.md","entry":"x"}"#),
        r#"{"kind": "tool-error", "message": "USER.md is not valid UTF-8 (first invalid byte at offset 0); only memory_consolidate can replace it"}"#,
    ),
    (
        "a directory as the file, add",
        |e| fs::create_dir(e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md", "message": "MEMORY.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a directory as the file, consolidate",
        |e| fs::create_dir(e.metis("USER.md")).unwrap(),
        |e| ok(e.ws().consolidate(U, "x")),
        r#"{"kind": "not-a-regular-file", "file": "USER.md", "message": "USER.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a FIFO as the file, read (must not hang)",
        |e| mkfifo(&e.metis("MEMORY.md")),
        |e| ok(e.ws().read(M)),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md", "message": "MEMORY.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a FIFO as the file, add (must not hang)",
        |e| mkfifo(&e.metis("MEMORY.md")),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md", "message": "MEMORY.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a socket as the file",
        |e| {
            std::mem::forget(std::os::unix::net::UnixListener::bind(e.metis("USER.md")).unwrap());
        },
        |e| ok(e.ws().read(U)),
        r#"{"kind": "not-a-regular-file", "file": "USER.md", "message": "USER.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a symlink out of .metis/, read",
        |e| symlink(e.secret(), e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().read(M)),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md", "message": "MEMORY.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a symlink out of .metis/, consolidate",
        |e| symlink(e.secret(), e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().consolidate(M, "pwned")),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md", "message": "MEMORY.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a symlink out of .metis/, memory_consolidate tool",
        |e| symlink(e.secret(), e.metis("USER.md")).unwrap(),
        |e| {
            tool(
                e,
                "memory_consolidate",
                r#"{"file":"USER.md","content":"pwned"}"#,
            )
        },
        r#"{"kind": "tool-error", "message": "USER.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a relative .. symlink to the workspace",
        |e| {
            fs::write(e.t.root().join("notes.md"), "mine").unwrap();
            symlink("../notes.md", e.metis("MEMORY.md")).unwrap();
        },
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md", "message": "MEMORY.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a symlink loop",
        |e| {
            symlink("USER.md", e.metis("MEMORY.md")).unwrap();
            symlink("MEMORY.md", e.metis("USER.md")).unwrap();
        },
        |e| ok(e.ws().read(M)),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md", "message": "MEMORY.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a dangling symlink",
        |e| symlink("/nonexistent/memory.md", e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md", "message": "MEMORY.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        "a symlink to the other memory file",
        |e| {
            put(e, "MEMORY.md", b"m\n");
            symlink("MEMORY.md", e.metis("USER.md")).unwrap();
        },
        |e| ok(e.ws().add_entry(U, "x")),
        r#"{"kind": "not-a-regular-file", "file": "USER.md", "message": "USER.md is not a regular file inside .metis/ (a directory, a special file, or a symlink leading elsewhere)"}"#,
    ),
    (
        ".metis is a regular file, read",
        |e| fs::write(e.t.metis(), "file").unwrap(),
        |e| ok(e.ws().read(M)),
        r#"{"kind": "workspace", "message_ends_with": "/.metis exists but is not a directory"}"#,
    ),
    (
        ".metis is a regular file, add",
        |e| fs::write(e.t.metis(), "file").unwrap(),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "workspace", "message_ends_with": "/.metis exists but is not a directory"}"#,
    ),
    (
        ".metis is a regular file, tool",
        |e| fs::write(e.t.metis(), "file").unwrap(),
        |e| tool(e, "memory_add", r#"{"file":"MEMORY.md","entry":"x"}"#),
        r#"{"kind": "workspace", "message_ends_with": "/.metis exists but is not a directory"}"#,
    ),
    (
        "a read-only .metis/ (read-only pre-open)",
        |e| put(e, "MEMORY.md", b"kept\n"),
        |e| ok(e.ws().clone().read_only().add_entry(M, "x")),
        r#"{"kind": "read-only", "message": "MEMORY.md: this workspace was opened read-only; nothing was written"}"#,
    ),
    (
        "a read-only workspace creates no .metis/",
        |_| {},
        |e| ok(e.ws().clone().read_only().consolidate(M, "x")),
        r#"{"kind": "read-only", "message": "MEMORY.md: this workspace was opened read-only; nothing was written"}"#,
    ),
    (
        "a 10 MB entry",
        |_| {},
        |e| ok(e.ws().add_entry(M, &big(10 * MB))),
        r#"{"kind": "hard-cap-exceeded", "file": "MEMORY.md", "attempted_bytes": 10485761, "cap_bytes": 4096, "message": "MEMORY.md write rejected: 10485761 bytes exceeds hard cap 4096; consolidate before adding more"}"#,
    ),
    (
        "a 10 MB replacement",
        |e| put(e, "USER.md", b"a\n"),
        |e| ok(e.ws().replace(U, "a", &big(10 * MB))),
        r#"{"kind": "hard-cap-exceeded", "file": "USER.md", "attempted_bytes": 10485761, "cap_bytes": 3072, "message": "USER.md write rejected: 10485761 bytes exceeds hard cap 3072; consolidate before adding more"}"#,
    ),
    (
        "a 10 MB consolidate",
        |e| put(e, "USER.md", b"a\n"),
        |e| ok(e.ws().consolidate(U, &big(10 * MB))),
        r#"{"kind": "hard-cap-exceeded", "file": "USER.md", "attempted_bytes": 10485760, "cap_bytes": 3072, "message": "USER.md write rejected: 10485760 bytes exceeds hard cap 3072; consolidate before adding more"}"#,
    ),
    (
        "a 10 MB tool input",
        |_| {},
        |e| {
            tool(
                e,
                "memory_add",
                &format!(r#"{{"file":"MEMORY.md","entry":"{}"}}"#, big(10 * MB)),
            )
        },
        r#"{"kind": "tool-error", "message": "MEMORY.md write rejected: 10485761 bytes exceeds hard cap 4096; consolidate before adding more"}"#,
    ),
    (
        "a 10 MB tool input of junk properties",
        |_| {},
        |e| {
            tool(
                e,
                "memory_add",
                &format!(
                    r#"{{"file":"MEMORY.md","entry":"x","pad":"{}"}}"#,
                    big(10 * MB)
                ),
            )
        },
        r#"{"kind": "tool-error", "message": "invalid input for memory_add: \"pad\" is not allowed (memory_add takes file, entry)"}"#,
    ),
    (
        "a 100 MB entry beyond the memory limit",
        |_| {},
        |e| ok(e.ws().add_entry(M, &big(100 * MB))),
        r#"{"kind": "trap"}"#,
    ),
    (
        "deeply nested JSON",
        |_| {},
        |e| tool(e, "memory_add", &"[".repeat(MB)),
        r#"{"kind": "tool-error", "message_starts_with": "invalid input for memory_add: not valid JSON (EOF while parsing a list"}"#,
    ),
    (
        "a huge JSON array",
        |_| {},
        |e| tool(e, "memory_add", &format!("[{}0]", "0,".repeat(MB))),
        r#"{"kind": "tool-error", "message": "invalid input for memory_add: expected a JSON object, got array"}"#,
    ),
    (
        "a lone surrogate escape in JSON",
        |_| {},
        |e| tool(e, "memory_add", r#"{"file":"MEMORY.md","entry":"\ud800"}"#),
        r#"{"kind": "tool-error", "message_starts_with": "invalid input for memory_add: not valid JSON (unexpected end of hex escape"}"#,
    ),
    (
        "a path-traversal file name",
        |_| {},
        |e| {
            tool(
                e,
                "memory_consolidate",
                r#"{"file":"../../etc/passwd","content":"x"}"#,
            )
        },
        r#"{"kind": "tool-error", "message": "invalid input for memory_consolidate: \"file\" must be one of \"MEMORY.md\", \"USER.md\", got \"../../etc/passwd\""}"#,
    ),
    (
        "an absolute file name",
        |_| {},
        |e| {
            tool(
                e,
                "memory_consolidate",
                r#"{"file":"/tmp/MEMORY.md","content":"x"}"#,
            )
        },
        r#"{"kind": "tool-error", "message": "invalid input for memory_consolidate: \"file\" must be one of \"MEMORY.md\", \"USER.md\", got \"/tmp/MEMORY.md\""}"#,
    ),
    (
        "a NUL-padded file name",
        |_| {},
        |e| {
            tool(
                e,
                "memory_add",
                "{\"file\":\"MEMORY.md\\u0000\",\"entry\":\"x\"}",
            )
        },
        r#"{"kind": "tool-error", "message": "invalid input for memory_add: \"file\" must be one of \"MEMORY.md\", \"USER.md\", got \"MEMORY.md\\u0000\""}"#,
    ),
    (
        "every property wrong at once",
        |_| {},
        |e| {
            tool(
                e,
                "memory_replace",
                r#"{"file":1,"old":null,"new":[],"x":{}}"#,
            )
        },
        r#"{"kind": "tool-error", "message": "invalid input for memory_replace: \"file\" must be a string, got number; \"old\" must be a string, got null; \"new\" must be a string, got array; \"x\" is not allowed (memory_replace takes file, old, new)"}"#,
    ),
    (
        "an unknown tool",
        |_| {},
        |e| tool(e, "memory_delete_everything", "{}"),
        r#"{"kind": "tool-error", "message": "unknown tool \"memory_delete_everything\"; the memory tools are memory_add, memory_replace, memory_consolidate"}"#,
    ),
    (
        "a file far over the hard cap on disk, add",
        |e| put(e, "MEMORY.md", big(10 * MB).as_bytes()),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "too-large", "file": "MEMORY.md", "size_bytes": 10485760, "limit_bytes": 16384, "message": "MEMORY.md is 10485760 bytes, more than the 16384 the store reads (4 times its hard cap 4096): the store did not write it; look at it, then shorten or remove it by hand"}"#,
    ),
    (
        "a file far over the hard cap on disk, the prompt",
        |e| put(e, "USER.md", big(30 * MB).as_bytes()),
        |e| ok(e.ws().assemble_system_prompt("base")),
        r#"{"kind": "too-large", "file": "USER.md", "size_bytes": 31457280, "limit_bytes": 12288}"#,
    ),
    (
        "a file one byte over the read limit, read",
        |e| put(e, "MEMORY.md", big(16385).as_bytes()),
        |e| ok(e.ws().read(M)),
        r#"{"kind": "too-large", "file": "MEMORY.md", "size_bytes": 16385, "limit_bytes": 16384}"#,
    ),
    (
        "a file over the read limit, consolidate (it must be looked at by a person)",
        |e| put(e, "MEMORY.md", big(MB).as_bytes()),
        |e| ok(e.ws().consolidate(M, "small\n")),
        r#"{"kind": "too-large", "file": "MEMORY.md", "size_bytes": 1048576}"#,
    ),
    (
        "a file over the read limit, audit",
        |e| put(e, "MEMORY.md", big(MB).as_bytes()),
        |e| ok(e.ws().audit(M)),
        r#"{"kind": "too-large", "file": "MEMORY.md", "size_bytes": 1048576}"#,
    ),
    (
        "a hard link to a file outside .metis",
        |e| fs::hard_link(e.secret(), e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().assemble_system_prompt("base")),
        r#"{"kind": "not-a-regular-file", "file": "MEMORY.md"}"#,
    ),
    (
        "a hard link to a file outside .metis, consolidate",
        |e| fs::hard_link(e.secret(), e.metis("USER.md")).unwrap(),
        |e| ok(e.ws().consolidate(U, "mine\n")),
        r#"{"kind": "not-a-regular-file", "file": "USER.md"}"#,
    ),
    (
        ".metis is a symbolic link to another project's memory",
        |e| symlink(e.outside.path().join("other-project"), e.t.metis()).unwrap(),
        |e| ok(e.ws().read(U)),
        r#"{"kind": "workspace", "message_ends_with": "memory would be read and written outside this workspace, so it is refused (if you keep memory there on purpose, pass --allow-metis-link, or use Workspace::follow_metis_link)"}"#,
    ),
    (
        ".metis is a symbolic link, a tool write",
        |e| symlink(e.outside.path(), e.t.metis()).unwrap(),
        |e| tool(e, "memory_add", r#"{"file": "MEMORY.md", "entry": "x"}"#),
        r#"{"kind": "workspace"}"#,
    ),
    (
        ".metis is a dangling symbolic link, a write",
        |e| symlink(e.outside.path().join("nowhere"), e.t.metis()).unwrap(),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "workspace"}"#,
    ),
    (
        "a directory at the lock's name",
        |e| fs::create_dir(e.metis(".MEMORY.md.lock")).unwrap(),
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "io", "message": "MEMORY.md: I/O error: .metis/.MEMORY.md.lock is a directory, not a lock file a writer made, so no write can take the lock; nothing was written: remove it"}"#,
    ),
    (
        "a link to /dev/zero at the lock's name",
        |e| symlink("/dev/zero", e.metis(".USER.md.lock")).unwrap(),
        |e| ok(e.ws().consolidate(U, "x")),
        r#"{"kind": "io", "message_starts_with": "USER.md: I/O error: .metis/.USER.md.lock is a symbolic link, not a lock file"}"#,
    ),
    (
        "a directory at the break lock's name, beside a lock that looks stale",
        |e| {
            put(e, ".MEMORY.md.lock", b"0123456789abcdef\n");
            let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
            fs::File::options()
                .write(true)
                .open(e.metis(".MEMORY.md.lock"))
                .unwrap()
                .set_modified(old)
                .unwrap();
            fs::create_dir(e.metis(".MEMORY.md.lock.break")).unwrap();
        },
        |e| ok(e.ws().add_entry(M, "x")),
        r#"{"kind": "io", "message": "MEMORY.md: I/O error: .metis/.MEMORY.md.lock.break is a directory, not a lock file a writer made, so no write can take the lock; nothing was written: remove it"}"#,
    ),
    (
        "a FIFO at the lock's name",
        |e| mkfifo(&e.metis(".MEMORY.md.lock")),
        |e| tool(e, "memory_add", r#"{"file": "MEMORY.md", "entry": "x"}"#),
        r#"{"kind": "tool-error", "message_starts_with": "MEMORY.md: I/O error: .metis/.MEMORY.md.lock is a special file, not a lock file"}"#,
    ),
    (
        "thousands of unexpected properties",
        |_| {},
        |e| {
            let keys: String = (0..150_000).map(|i| format!(r#","k{i}":0"#)).collect();
            tool(
                e,
                "memory_add",
                &format!(r#"{{"file":"USER.md","entry":"x"{keys}}}"#),
            )
        },
        r#"{"kind": "tool-error", "message": "invalid input for memory_add: \"k0\" is not allowed (memory_add takes file, entry); \"k1\" is not allowed (memory_add takes file, entry); \"k2\" is not allowed (memory_add takes file, entry); \"k3\" is not allowed (memory_add takes file, entry); \"k4\" is not allowed (memory_add takes file, entry); and 149995 more properties are not allowed"}"#,
    ),
    (
        "a file over the cap, replace that shrinks it too little",
        |e| put(e, "USER.md", (big(4994) + "unique").as_bytes()),
        |e| ok(e.ws().replace(U, "unique", "")),
        r#"{"kind": "hard-cap-exceeded", "file": "USER.md", "attempted_bytes": 4994, "cap_bytes": 3072, "message": "USER.md write rejected: 4994 bytes exceeds hard cap 3072; consolidate before adding more"}"#,
    ),
];

#[test]
fn every_hostile_input_gets_a_typed_error_and_changes_nothing() {
    assert!(CATALOGUE.len() >= 30);
    let mut failures = Vec::new();
    for (name, setup, act, expected) in CATALOGUE {
        let env = Env {
            t: TestWorkspace::new(),
            outside: tempfile::tempdir().unwrap(),
        };
        fs::write(env.secret(), "secret\n").unwrap();
        fs::create_dir(env.outside.path().join("other-project")).unwrap();
        fs::write(env.outside.path().join("other-project/USER.md"), "theirs\n").unwrap();
        setup(&env);
        let inside = env.t.snapshot();
        let outside = snapshot_of(env.outside.path());
        let got = match act(&env) {
            Ok(()) => json!("success"),
            Err(error) => error_json(&error),
        };
        let expected: Value = serde_json::from_str(expected).unwrap();
        if let Err(mismatch) = matches_partially(&expected, &got) {
            failures.push(format!("{name}: {mismatch}; got {got}"));
        }
        if env.t.snapshot() != inside {
            failures.push(format!("{name}: something in the workspace changed"));
        }
        if snapshot_of(env.outside.path()) != outside {
            failures.push(format!("{name}: something outside the workspace changed"));
        }
        // The same `Workspace` value keeps working once the planted entry is gone.
        remove_any(&env.t.metis());
        let after = env
            .ws()
            .add_entry(M, "after the hostile input")
            .and_then(|_| env.ws().read(M));
        if after.as_deref() != Ok("after the hostile input\n") {
            failures.push(format!("{name}: the next call failed: {after:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    eprintln!(
        "{} hostile inputs: each the expected typed error, nothing changed inside or outside \
         the workspace, and the next call worked",
        CATALOGUE.len()
    );
}

/// Every key of `expected` equals the same key of `got`, except `message_starts_with` and
/// `message_ends_with`, which check part of `got`'s message.
fn matches_partially(expected: &Value, got: &Value) -> Result<(), String> {
    let Some(expected) = expected.as_object() else {
        return (expected == got)
            .then_some(())
            .ok_or_else(|| format!("expected {expected}"));
    };
    let message = got["message"].as_str().unwrap_or_default();
    for (key, want) in expected {
        let want_text = want.as_str().unwrap_or_default();
        let ok = match key.as_str() {
            "message_starts_with" => message.starts_with(want_text),
            "message_ends_with" => message.ends_with(want_text),
            _ => got.get(key) == Some(want),
        };
        if !ok {
            return Err(format!("{key} should be {want}"));
        }
    }
    Ok(())
}

/// Removes `path`, whatever it is.
fn remove_any(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path).unwrap(),
        Ok(_) => fs::remove_file(path).unwrap(),
        Err(_) => {}
    }
}

#[test]
fn the_store_keeps_working_after_every_hostile_input() {
    let t = TestWorkspace::new();
    let strict = t.ws.clone().with_limits(Limits {
        fuel: 10_000_000,
        memory_bytes: 16 * MB,
    });
    assert!(matches!(
        strict.add_entry(M, &big(20 * MB)),
        Err(Error::Trap { .. })
    ));
    assert!(strict.call_tool("memory_add", &"[".repeat(MB)).is_err());
    strict.add_entry(M, "still works").unwrap();
    assert_eq!(strict.read(M).unwrap(), "still works\n");
}

#[test]
fn a_temporary_file_left_by_a_crash_is_removed_by_the_next_write() {
    let t = TestWorkspace::new();
    t.put(M, "kept\n");
    let leftover = t.metis().join(".MEMORY.md.00000000deadbeef.tmp");
    fs::write(&leftover, "half a wri").unwrap();
    assert_eq!(t.ws.read(M).unwrap(), "kept\n");
    t.ws.add_entry(M, "next").unwrap();
    assert_eq!(t.bytes(M).unwrap(), b"kept\nnext\n");
    assert_eq!(t.metis_names(), ["MEMORY.md"]);
}
