//! CLI messages a person can act on, run as the real CLI process against a
//! temporary workspace. Every refusal leaves the workspace as it was (a snapshot of every
//! file's hash before and after).

use crate::common;

use std::io::Read;
use std::process::{Command, Output, Stdio};

use common::{TestWorkspace, json, run_cli_with, sha256_hex, stderr, stdout};
use metis_memory::MemoryFile;
use serde_json::Value;

const M: MemoryFile = MemoryFile::Memory;
const BIN: &str = env!("CARGO_BIN_EXE_metis-memory");

fn run(t: &TestWorkspace, args: &[&str]) -> Output {
    run_cli_with(t, args, &[], Vec::new())
}

#[test]
fn an_empty_old_is_a_usage_error_that_says_why_and_changes_nothing() {
    let t = TestWorkspace::new();
    t.put(M, "abc\n");
    let before = t.snapshot();
    let out = run(&t, &["replace", "MEMORY.md", "", "x"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("OLD is empty, and an empty text occurs everywhere"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("appears"), "{}", stderr(&out));
    let out = run(&t, &["replace", "MEMORY.md", "", "x", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json(&out)["error"]["kind"], "usage");
    assert_eq!(t.snapshot(), before);
}

#[test]
fn a_file_that_is_not_utf8_is_refused_with_the_command_that_replaces_it() {
    let t = TestWorkspace::new();
    t.put(M, b"ok\n\xff\n");
    let before = t.snapshot();
    let out = run(&t, &["add", "MEMORY.md", "- more"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    // The store's text, as the contract has it, then the command for a person.
    assert!(
        text.starts_with(
            "MEMORY.md is not valid UTF-8 (first invalid byte at offset 3); only memory_consolidate can replace it\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("metis-memory consolidate MEMORY.md CONTENT"),
        "{text}"
    );
    let out = run(&t, &["read", "MEMORY.md", "--json"]);
    let error = &json(&out)["error"];
    assert_eq!(error["kind"], "invalid-utf8");
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("metis-memory consolidate MEMORY.md"),
        "{error}"
    );
    assert_eq!(t.snapshot(), before);
    // The command the hint names works, --diff or not (no diff from a file not text).
    let out = run(&t, &["consolidate", "MEMORY.md", "- fixed\n", "--diff"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("no diff: "), "{}", stderr(&out));
    assert_eq!(t.bytes(M).unwrap(), b"- fixed\n");
}

/// An input larger than the CLI takes is refused before the component sees it. A 24 MB
/// tool call used to run the component out of memory and print a wasm backtrace.
#[test]
fn an_input_larger_than_the_cli_takes_is_a_clear_size_error_for_every_command() {
    let t = TestWorkspace::new();
    t.put(M, "- kept\n");
    let before = t.snapshot();
    let big = 24_000_000;
    let call = |content_bytes: usize| {
        let mut input = br#"{"file":"MEMORY.md","content":""#.to_vec();
        input.resize(input.len() + content_bytes, b'a');
        input.extend_from_slice(br#""}"#);
        input
    };
    for (args, stdin, what) in [
        (vec!["call", "memory_consolidate"], call(big), "JSON"),
        (vec!["add", "MEMORY.md"], vec![b'a'; big], "ENTRY"),
        (
            vec!["consolidate", "MEMORY.md", "-"],
            vec![b'a'; big],
            "CONTENT",
        ),
        (
            vec!["call", "memory_add", "-"],
            call((1 << 20) - 29),
            "JSON",
        ),
    ] {
        let out = run_cli_with(&t, &args, &[], stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "error: the {what} on standard input is larger than 1048576 bytes, more than the 1 MiB the CLI takes"
            )),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("wasm"), "{}", stderr(&out));
        let out = run_cli_with(&t, &[&args[..], &["--json"]].concat(), &[], vec![b'a'; big]);
        assert_eq!(json(&out)["error"]["kind"], "usage", "{args:?}");
        assert_eq!(t.snapshot(), before, "{args:?}");
    }
    // At the limit, the store answers: its own size error, exit 1.
    let out = run_cli_with(&t, &["add", "MEMORY.md"], &[], vec![b'a'; 1 << 20]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("write rejected: 1048584 bytes exceeds hard cap 4096"),
        "{}",
        stderr(&out)
    );
    // An argument as large as the system lets a process take (128 KiB on Linux): the
    // store's size error too, never a trap.
    let entry = "a".repeat(100_000);
    let out = run(&t, &["add", "MEMORY.md", &entry]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "MEMORY.md write rejected: 100008 bytes exceeds hard cap 4096; consolidate before adding more\n"
    );
    assert_eq!(t.snapshot(), before);
}

/// `exists` answers true or false with exit status 0; a directory where the file should
/// be is neither (no command can read or write it): an error saying so, exit 1, as the
/// help says.
#[test]
fn exists_on_a_directory_is_an_error_and_the_help_says_so() {
    let t = TestWorkspace::new();
    std::fs::create_dir_all(t.path(M)).unwrap();
    let out = run(&t, &["exists", "MEMORY.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("MEMORY.md is not a regular file inside .metis/"),
        "{}",
        stderr(&out)
    );
    let out = run(&t, &["exists", "MEMORY.md", "--json"]);
    assert_eq!(json(&out)["error"]["kind"], "not-a-regular-file");
    let help = stdout(&run(&t, &["exists", "--help"]));
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("exit status 0 either way; when something other than a regular file is there (a directory), no command can use it: an error saying so, exit status 1"),
        "{help}"
    );
    let out = run(&t, &["exists", "USER.md"]);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "false\n".into())
    );
}

/// `component -o -` into a pipe its reader closed early stops quietly, as `cat` piped
/// into `head` does: no panic, no error text, exit 0. The component (over 300 KB) is more
/// than a pipe holds (64 KiB), so the write meets the closed pipe.
#[test]
fn component_to_a_closed_pipe_stops_quietly() {
    assert!(metis_memory::COMPONENT_WASM.len() > 4 * 65536);
    let t = TestWorkspace::new();
    let mut child = Command::new(BIN)
        .args(["-w", t.root().to_str().unwrap(), "component", "-o", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 8];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // The read end is dropped here: the rest of the write fails with EPIPE.
    let out = child.wait_with_output().unwrap();
    assert_eq!(&head, &metis_memory::COMPONENT_WASM[..8]);
    assert_eq!(stderr(&out), "");
    assert_eq!(out.status.code(), Some(0));
}

/// With `--json`, every error is one JSON value on stdout with a kind, clap's argument
/// errors and the CLI's own usage errors included, and the exit status stays 2.
#[test]
fn with_json_every_usage_error_prints_a_json_error_on_stdout() {
    let t = TestWorkspace::new();
    let missing = t.root().join("missing");
    let missing = missing.to_str().unwrap();
    for args in [
        vec!["--json", "add"],
        vec!["--json"],
        vec!["--json", "frobnicate"],
        vec!["add", "NOTES.md", "x", "--json"],
        vec![
            "--json",
            "consolidate",
            "MEMORY.md",
            "x",
            "--expect-hash",
            "abc",
        ],
        vec!["--json", "add", "MEMORY.md", "--jsn"],
        vec!["--json", "consolidate", "MEMORY.md"],
        vec!["--json", "-w", missing, "status"],
        vec!["--json", "status", "--color", "sometimes"],
    ] {
        let out = run(&t, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let error = &json(&out)["error"];
        assert_eq!(error["kind"], "usage", "{args:?}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            !message.is_empty() && !message.starts_with("error:"),
            "{args:?}: {error}"
        );
        assert!(!stderr(&out).is_empty(), "{args:?}");
    }
    let error = &json(&run(&t, &["--json", "add"]))["error"];
    assert_eq!(
        error["message"],
        "the following required arguments were not provided: <FILE>"
    );
    assert_eq!(error["usage"], "Usage: metis-memory add <FILE> [ENTRY]");
    let error = &json(&run(&t, &["--json"]))["error"];
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("'metis-memory' requires a subcommand but one was not provided"),
        "{error}"
    );
    // Help is printed as asked, --json or not.
    let out = run(&t, &["--json", "add", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("Usage: metis-memory add"));
    // Without --json, stdout stays empty.
    assert_eq!(stdout(&run(&t, &["add"])), "");
    assert!(!t.metis().exists());
}

/// `status --json` has the same keys for every file: `sha256` and `error`, one of them
/// null.
#[test]
fn status_json_always_has_sha256_and_error_one_of_them_null() {
    let t = TestWorkspace::new();
    std::fs::create_dir_all(t.path(M)).unwrap();
    t.put(MemoryFile::User, "- likes tea\n");
    let out = run(&t, &["status", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let files = json(&out)["files"].clone();
    let memory = files[0].as_object().unwrap();
    assert_eq!(memory["sha256"], Value::Null);
    assert!(
        memory["error"]
            .as_str()
            .unwrap()
            .contains("not a regular file"),
        "{memory:?}"
    );
    let user = files[1].as_object().unwrap();
    assert_eq!(user["sha256"], sha256_hex(b"- likes tea\n"));
    assert_eq!(user["error"], Value::Null);
    let keys = |file: &serde_json::Map<String, Value>| file.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(memory), keys(user));
}

// Reading stdin from a terminal says so, instead of waiting without a word. The terminal
// is a real pseudo-terminal (util-linux `script`), fed a line and Ctrl-D.
#[test]
fn reading_stdin_from_a_terminal_says_so() {
    let t = TestWorkspace::new();
    let command = format!(
        "'{}' -w '{}' add MEMORY.md",
        env!("CARGO_BIN_EXE_metis-memory"),
        t.root().display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs the CLI on a pseudo-terminal");
    use std::io::Write as _;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"- typed at a terminal\n\x04").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("reading ENTRY from standard input; end it with Ctrl-D"),
        "{shown}"
    );
    assert_eq!(
        t.bytes(MemoryFile::Memory).unwrap(),
        b"- typed at a terminal\n"
    );
}
