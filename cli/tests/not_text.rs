//! A memory file that is not valid UTF-8 (one bad byte in a committed USER.md, say) is
//! left out of the prompt a host composes, with a note saying why and how a person fixes
//! it, and the other file is still composed: in `metis-memory prompt`, in a session, and
//! over MCP (`cli/tests/mcp_stdio.rs`). The store's `assemble-system-prompt` still fails
//! on it, as its contract says. (Found by review: one bad byte made the whole `prompt`
//! fail, exit 1, and an agent started with no memory at all.)

use crate::common;

use std::process::Output;

use common::{TestWorkspace, json, run_cli_with, stderr, stdout};
use metis_memory::{AuditPolicy, ComposeOptions, Error, MemoryFile, Session, StoreError};

/// USER.md with one byte that is not UTF-8, at offset 5.
const BAD_USER: &[u8] = b"- caf\xff tea\n";

const NOTE: &str = "[metis-memory: USER.md cannot be shown: it is not valid UTF-8 (first invalid byte at offset 5), so it is left out, and the memory tools will not replace what you cannot be shown: ask the user to fix it (`metis-memory audit USER.md` says where, `metis-memory consolidate USER.md -` replaces it).]";

fn run(t: &TestWorkspace, args: &[&str]) -> Output {
    run_cli_with(t, args, &[], Vec::new())
}

fn workspace() -> TestWorkspace {
    let t = TestWorkspace::new();
    t.put(MemoryFile::User, BAD_USER);
    t.put(MemoryFile::Memory, "- builds with cargo\n");
    t
}

#[test]
fn prompt_leaves_a_file_that_is_not_text_out_with_a_note_and_composes_the_other() {
    let t = workspace();
    let out = run(&t, &["prompt", "--base", "You help."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("You help.\n\n{NOTE}\n\n## Workspace memory (MEMORY.md)\n- builds with cargo\n")
    );
    let out = run(&t, &["--json", "prompt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value = json(&out);
    let files: Vec<&str> = value["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|source| source["file"].as_str().unwrap())
        .collect();
    // No version of USER.md was shown: none is offered to hold a consolidate to.
    assert_eq!(files, ["MEMORY.md"], "{value}");
    assert_eq!(t.bytes(MemoryFile::User).unwrap(), BAD_USER);
}

#[test]
fn the_stores_assemble_system_prompt_still_fails_on_it() {
    let t = workspace();
    let Err(Error::Store { error, .. }) = t.ws.assemble_system_prompt("") else {
        panic!("assemble-system-prompt composed a prompt from a file that is not text")
    };
    assert!(
        matches!(error, StoreError::InvalidUtf8(ref info) if info.offset == 5),
        "{error:?}"
    );
}

/// With the budget on, the store's prompt is the workspace's `compose` with `strict`: it
/// fails on the file all the same, where a composition that is not strict leaves it out.
#[test]
fn the_stores_assemble_system_prompt_fails_on_it_in_the_budgets_layout_too() {
    let t = workspace();
    let ws = t.ws.clone().with_prompt_budget();
    let Err(Error::Store { error, .. }) = ws.assemble_system_prompt("") else {
        panic!("assemble-system-prompt composed a prompt from a file that is not text")
    };
    assert!(
        matches!(error, StoreError::InvalidUtf8(ref info) if info.offset == 5),
        "{error:?}"
    );
    let options = ComposeOptions {
        audit: AuditPolicy::Off,
        strict: false,
    };
    let composed = ws.compose("", options).unwrap();
    assert!(composed.text.starts_with(NOTE), "{}", composed.text);
    assert!(
        composed.text.contains("## Workspace memory (MEMORY.md) ["),
        "{}",
        composed.text
    );
}

/// A session (the Rust library's; the packages' run the same code in the component)
/// composes the rest, and no consolidate replaces what no model was shown.
#[test]
fn a_session_composes_the_other_file_and_holds_the_one_left_out() {
    let t = workspace();
    let mut session = Session::new(t.ws.clone());
    let prompt = session.system_prompt("").unwrap();
    assert_eq!(
        prompt.text,
        format!("{NOTE}\n\n## Workspace memory (MEMORY.md)\n- builds with cargo")
    );
    let seen: Vec<MemoryFile> = session.state().seen.iter().map(|v| v.file).collect();
    assert_eq!(seen, [MemoryFile::Memory]);
    let consolidate = r#"{"file":"USER.md","content":"- likes tea\n"}"#;
    for _ in 0..2 {
        let Err(Error::Tool(refused)) = session.call_tool("memory_consolidate", consolidate) else {
            panic!("a consolidate replaced a file no model was shown")
        };
        assert!(
            refused.message.contains("ask the user to review USER.md"),
            "{}",
            refused.message
        );
        session.next_response();
    }
    assert_eq!(t.bytes(MemoryFile::User).unwrap(), BAD_USER);
    session
        .call_tool(
            "memory_add",
            r#"{"file":"MEMORY.md","entry":"- tests with cargo test"}"#,
        )
        .unwrap();
    // Fixed by a person, it is composed again.
    t.put(MemoryFile::User, "- likes tea\n");
    let prompt = session.system_prompt("").unwrap();
    assert!(
        prompt
            .text
            .starts_with("## User context (USER.md)\n- likes tea\n\n## Workspace memory"),
        "{}",
        prompt.text
    );
}

/// `prompt --session` writes a session that names no version of the file left out, and
/// `call --session` takes it: the file is held to the empty version, so nothing of it is
/// lost.
#[test]
fn a_session_file_from_such_a_prompt_is_taken_by_call() {
    let t = workspace();
    let session = t.root().join("session.json");
    let session = session.to_str().unwrap();
    let out = run(&t, &["prompt", "--session", session]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with(NOTE), "{}", stdout(&out));
    let add = r#"{"file":"MEMORY.md","entry":"- tests with cargo test"}"#;
    let out = run(&t, &["call", "--session", session, "memory_add", add]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let consolidate = r#"{"file":"USER.md","content":"- likes tea\n"}"#;
    let out = run(
        &t,
        &[
            "call",
            "--session",
            session,
            "memory_consolidate",
            consolidate,
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(t.bytes(MemoryFile::User).unwrap(), BAD_USER);
    assert_eq!(
        t.bytes(MemoryFile::Memory).unwrap(),
        b"- builds with cargo\n- tests with cargo test\n"
    );
}
