//! A catalogue of hostile and broken inputs. Each gets a typed error and leaves every
//! byte on disk as it was, inside the workspace and outside it; nothing hangs.

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::TestWorkspace;
use metis_memory::json::error_json;
use metis_memory::{Error, Limits, MemoryFile, Workspace};

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

/// (name, setup, action, the error's kind)
const CATALOGUE: &[(&str, Setup, Act, &str)] = &[
    (
        "invalid UTF-8 file, add",
        |e| put(e, "MEMORY.md", b"ok \xff\n"),
        |e| ok(e.ws().add_entry(M, "x")),
        "invalid-utf8",
    ),
    (
        "invalid UTF-8 file, replace",
        |e| put(e, "MEMORY.md", b"ok \xff\n"),
        |e| ok(e.ws().replace(M, "ok", "no")),
        "invalid-utf8",
    ),
    (
        "invalid UTF-8 file, read",
        |e| put(e, "USER.md", b"\xc3"),
        |e| ok(e.ws().read(U)),
        "invalid-utf8",
    ),
    (
        "invalid UTF-8 file, prompt",
        |e| put(e, "USER.md", b"\x80abc"),
        |e| ok(e.ws().assemble_system_prompt("b")),
        "invalid-utf8",
    ),
    (
        "overlong UTF-8 encoding",
        |e| put(e, "MEMORY.md", b"\xc0\x80"),
        |e| ok(e.ws().read(M)),
        "invalid-utf8",
    ),
    (
        "UTF-16 file with a BOM",
        |e| put(e, "MEMORY.md", b"\xff\xfeh\0i\0"),
        |e| ok(e.ws().add_entry(M, "x")),
        "invalid-utf8",
    ),
    (
        "CESU-8 surrogate",
        |e| put(e, "MEMORY.md", b"\xed\xa0\x80"),
        |e| ok(e.ws().read(M)),
        "invalid-utf8",
    ),
    (
        "invalid UTF-8 file, memory_add tool",
        |e| put(e, "USER.md", b"\xfe"),
        |e| tool(e, "memory_add", r#"{"file":"USER.md","entry":"x"}"#),
        "tool-error",
    ),
    (
        "a directory as the file, add",
        |e| fs::create_dir(e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().add_entry(M, "x")),
        "not-a-regular-file",
    ),
    (
        "a directory as the file, consolidate",
        |e| fs::create_dir(e.metis("USER.md")).unwrap(),
        |e| ok(e.ws().consolidate(U, "x")),
        "not-a-regular-file",
    ),
    (
        "a FIFO as the file, read (must not hang)",
        |e| mkfifo(&e.metis("MEMORY.md")),
        |e| ok(e.ws().read(M)),
        "not-a-regular-file",
    ),
    (
        "a FIFO as the file, add (must not hang)",
        |e| mkfifo(&e.metis("MEMORY.md")),
        |e| ok(e.ws().add_entry(M, "x")),
        "not-a-regular-file",
    ),
    (
        "a socket as the file",
        |e| {
            std::mem::forget(std::os::unix::net::UnixListener::bind(e.metis("USER.md")).unwrap());
        },
        |e| ok(e.ws().read(U)),
        "not-a-regular-file",
    ),
    (
        "a symlink out of .metis/, read",
        |e| symlink(e.secret(), e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().read(M)),
        "not-a-regular-file",
    ),
    (
        "a symlink out of .metis/, consolidate",
        |e| symlink(e.secret(), e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().consolidate(M, "pwned")),
        "not-a-regular-file",
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
        "tool-error",
    ),
    (
        "a relative .. symlink to the workspace",
        |e| {
            fs::write(e.t.root().join("notes.md"), "mine").unwrap();
            symlink("../notes.md", e.metis("MEMORY.md")).unwrap();
        },
        |e| ok(e.ws().add_entry(M, "x")),
        "not-a-regular-file",
    ),
    (
        "a symlink loop",
        |e| {
            symlink("USER.md", e.metis("MEMORY.md")).unwrap();
            symlink("MEMORY.md", e.metis("USER.md")).unwrap();
        },
        |e| ok(e.ws().read(M)),
        "not-a-regular-file",
    ),
    (
        "a dangling symlink",
        |e| symlink("/nonexistent/memory.md", e.metis("MEMORY.md")).unwrap(),
        |e| ok(e.ws().add_entry(M, "x")),
        "not-a-regular-file",
    ),
    (
        "a symlink to the other memory file",
        |e| {
            put(e, "MEMORY.md", b"m\n");
            symlink("MEMORY.md", e.metis("USER.md")).unwrap();
        },
        |e| ok(e.ws().add_entry(U, "x")),
        "not-a-regular-file",
    ),
    (
        ".metis is a regular file, read",
        |e| fs::write(e.t.metis(), "file").unwrap(),
        |e| ok(e.ws().read(M)),
        "workspace",
    ),
    (
        ".metis is a regular file, add",
        |e| fs::write(e.t.metis(), "file").unwrap(),
        |e| ok(e.ws().add_entry(M, "x")),
        "workspace",
    ),
    (
        ".metis is a regular file, tool",
        |e| fs::write(e.t.metis(), "file").unwrap(),
        |e| tool(e, "memory_add", r#"{"file":"MEMORY.md","entry":"x"}"#),
        "workspace",
    ),
    (
        "a read-only .metis/ (read-only pre-open)",
        |e| put(e, "MEMORY.md", b"kept\n"),
        |e| ok(e.ws().clone().read_only().add_entry(M, "x")),
        "io",
    ),
    (
        "a read-only workspace creates no .metis/",
        |_| {},
        |e| ok(e.ws().clone().read_only().consolidate(M, "x")),
        "io",
    ),
    (
        "a 10 MB entry",
        |_| {},
        |e| ok(e.ws().add_entry(M, &big(10 * MB))),
        "hard-cap-exceeded",
    ),
    (
        "a 10 MB replacement",
        |e| put(e, "USER.md", b"a\n"),
        |e| ok(e.ws().replace(U, "a", &big(10 * MB))),
        "hard-cap-exceeded",
    ),
    (
        "a 10 MB consolidate",
        |e| put(e, "USER.md", b"a\n"),
        |e| ok(e.ws().consolidate(U, &big(10 * MB))),
        "hard-cap-exceeded",
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
        "tool-error",
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
        "tool-error",
    ),
    (
        "a 100 MB entry beyond the memory limit",
        |_| {},
        |e| ok(e.ws().add_entry(M, &big(100 * MB))),
        "trap",
    ),
    (
        "deeply nested JSON",
        |_| {},
        |e| tool(e, "memory_add", &"[".repeat(MB)),
        "tool-error",
    ),
    (
        "a huge JSON array",
        |_| {},
        |e| tool(e, "memory_add", &format!("[{}0]", "0,".repeat(MB))),
        "tool-error",
    ),
    (
        "a lone surrogate escape in JSON",
        |_| {},
        |e| tool(e, "memory_add", r#"{"file":"MEMORY.md","entry":"\ud800"}"#),
        "tool-error",
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
        "tool-error",
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
        "tool-error",
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
        "tool-error",
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
        "tool-error",
    ),
    (
        "an unknown tool",
        |_| {},
        |e| tool(e, "memory_delete_everything", "{}"),
        "tool-error",
    ),
    (
        "a file far over the hard cap on disk",
        |e| put(e, "MEMORY.md", big(10 * MB).as_bytes()),
        |e| ok(e.ws().add_entry(M, "x")),
        "hard-cap-exceeded",
    ),
    (
        "a file over the cap, replace that shrinks it too little",
        |e| put(e, "USER.md", big(5000).as_bytes()),
        |e| ok(e.ws().replace(U, "xx", "")),
        "not-unique",
    ),
];

#[test]
fn every_hostile_input_gets_a_typed_error_and_changes_nothing() {
    assert!(CATALOGUE.len() >= 30);
    let mut failures = Vec::new();
    for (name, setup, act, kind) in CATALOGUE {
        let env = Env {
            t: TestWorkspace::new(),
            outside: tempfile::tempdir().unwrap(),
        };
        fs::write(env.secret(), "secret\n").unwrap();
        setup(&env);
        let inside = env.t.snapshot();
        let outside = fs::read(env.secret()).unwrap();
        let got = match act(&env) {
            Ok(()) => "success".to_owned(),
            Err(error) => error_json(&error)["kind"].as_str().unwrap().to_owned(),
        };
        if got != *kind {
            failures.push(format!("{name}: expected {kind}, got {got}"));
        }
        if env.t.snapshot() != inside || fs::read(env.secret()).unwrap() != outside {
            failures.push(format!("{name}: something on disk changed"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    eprintln!(
        "{} hostile inputs: each a typed error, nothing changed",
        CATALOGUE.len()
    );
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
        Err(Error::Trap(_))
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
