//! Global user memory through the Rust library and the CLI: where the user's own
//! `.metis/` comes from, when it is created and removed, whose it must be, and that a
//! trapped write and a kept instance treat it as they treat the workspace's.

mod common;

use std::fs;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};

use common::{TestWorkspace, json, run_cli_with, stderr, stdout};
use metis_memory::faults::{Fault, FaultHook};
use metis_memory::{Error, GlobalUser, MemoryFile, StoreError};

const G: MemoryFile = MemoryFile::GlobalUser;

/// A workspace and a home of its own, with global user memory on.
struct Setup {
    t: TestWorkspace,
    home: tempfile::TempDir,
}

impl Setup {
    fn new(agent_writes: bool) -> Setup {
        let mut t = TestWorkspace::new();
        let home = tempfile::tempdir().unwrap();
        let global = GlobalUser::at(home.path().join(".metis")).agent_writes(agent_writes);
        t.ws = t.ws.clone().with_global_user(global);
        Setup { t, home }
    }

    fn global_dir(&self) -> PathBuf {
        self.home.path().join(".metis")
    }

    fn put_global(&self, text: &str) {
        fs::create_dir_all(self.global_dir()).unwrap();
        fs::write(self.global_dir().join("USER.md"), text).unwrap();
    }

    fn global_names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.global_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

#[test]
fn reads_create_nothing_and_the_first_write_makes_the_directory_0700() {
    let s = Setup::new(true);
    assert_eq!(s.t.ws.read(G).unwrap(), "");
    assert!(s.t.ws.assemble_system_prompt("base").unwrap() == "base");
    assert!(
        !s.global_dir().exists(),
        "a read created the user's .metis/"
    );
    let done =
        s.t.ws
            .call_tool("memory_add", r#"{"file":"USER.md","entry":"- name: Sam"}"#);
    assert_eq!(done.unwrap().result.file, G);
    let mode = fs::metadata(s.global_dir()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    assert_eq!(
        fs::read_to_string(s.global_dir().join("USER.md")).unwrap(),
        "- name: Sam\n"
    );
    assert_eq!(s.t.bytes(MemoryFile::User), None);
}

#[test]
fn a_refused_write_removes_the_directory_it_created() {
    let s = Setup::new(true);
    let refused = s.t.ws.add_entry(G, "   ");
    assert!(matches!(
        refused,
        Err(Error::Store {
            error: StoreError::EmptyEntry,
            ..
        })
    ));
    assert!(
        !s.global_dir().exists(),
        "a failed write left the user's .metis/"
    );
    assert!(!s.t.metis().exists());
}

#[test]
fn the_users_own_directory_must_be_theirs() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: chowning a directory to another user needs root");
        return;
    }
    let s = Setup::new(true);
    s.put_global("- planted by someone else\n");
    chown(s.global_dir(), Some(4242), Some(4242)).unwrap();
    let refused = s.t.ws.read(G).unwrap_err();
    assert!(
        matches!(&refused, Error::Workspace(m) if m.contains("belongs to uid 4242")),
        "{refused}"
    );
    let prompt = s.t.ws.assemble_system_prompt("");
    assert!(
        prompt.is_err(),
        "a foreign ~/.metis reached the prompt: {prompt:?}"
    );
    let trusted = s.t.ws.clone().trust_foreign_metis();
    assert_eq!(trusted.read(G).unwrap(), "- planted by someone else\n");
}

#[test]
fn a_read_only_workspace_refuses_writes_to_the_users_own_file() {
    let s = Setup::new(true);
    s.put_global("- name: Sam\n");
    let ws = s.t.ws.clone().read_only();
    let refused = ws.call_tool("memory_add", r#"{"file":"USER.md","entry":"- x"}"#);
    let Err(Error::Tool(refusal)) = refused else {
        panic!("a read-only workspace wrote: {refused:?}");
    };
    assert!(refusal.message.contains("read-only"), "{}", refusal.message);
    assert_eq!(s.global_names(), ["USER.md"]);
    assert_eq!(ws.read(G).unwrap(), "- name: Sam\n");
}

#[test]
fn a_kept_instance_follows_a_replaced_directory() {
    let s = Setup::new(false);
    s.put_global("- old home\n");
    assert_eq!(s.t.ws.read(G).unwrap(), "- old home\n");
    // Another checkout of the person's dotfiles replaces the directory.
    fs::rename(s.global_dir(), s.home.path().join("old")).unwrap();
    s.put_global("- new home\n");
    assert_eq!(s.t.ws.read(G).unwrap(), "- new home\n");
    let prompt = s.t.ws.assemble_system_prompt("").unwrap();
    assert!(prompt.contains("- new home"), "{prompt}");
}

#[test]
fn a_trapped_write_to_the_users_own_file_leaves_nothing_behind() {
    let s = Setup::new(true);
    s.put_global("- name: Sam\n");
    // The instance traps as it renames the new USER.md into the user's own directory.
    let hook = FaultHook::new(|call| {
        let renaming_user = call.function == "rename-at"
            && call
                .path
                .is_some_and(|p| p.starts_with(".USER.md.") && p.ends_with(".tmp"));
        renaming_user.then_some(Fault::Trap)
    });
    let trapped =
        s.t.ws
            .clone()
            .with_fault_hook(hook)
            .add_entry(G, "- likes tea");
    let Err(Error::Trap { written, .. }) = trapped else {
        panic!("expected a trap: {trapped:?}");
    };
    assert_eq!(written, Some(false));
    assert_eq!(
        s.global_names(),
        ["USER.md"],
        "the trapped write's lock or temporary file is left"
    );
    s.t.ws.add_entry(G, "- likes tea").unwrap();
    assert_eq!(s.t.ws.read(G).unwrap(), "- name: Sam\n- likes tea\n");
}

/// `metis-memory` in `t`'s workspace with `HOME` set to `home`.
fn cli(t: &TestWorkspace, home: &Path, args: &[&str]) -> std::process::Output {
    run_cli_with(t, args, &[("HOME", home.to_str().unwrap())], Vec::new())
}

#[test]
fn the_cli_finds_the_users_own_file_in_home_and_names_it() {
    let t = TestWorkspace::new();
    let home = tempfile::tempdir().unwrap();
    let add = cli(
        &t,
        home.path(),
        &[
            "--global-user",
            "write",
            "call",
            "memory_add",
            r#"{"file":"USER.md","entry":"- name: Sam"}"#,
        ],
    );
    assert!(add.status.success(), "{}", stderr(&add));
    assert_eq!(json(&add)["result"]["file"], "~/.metis/USER.md");
    let path = home.path().join(".metis/USER.md");
    assert_eq!(fs::read_to_string(&path).unwrap(), "- name: Sam\n");
    // Named by the path the shell expands `~/.metis/USER.md` to, or as written: read
    // without --global-user.
    for name in [path.to_str().unwrap(), "~/.metis/USER.md", "global-user"] {
        let read = cli(&t, home.path(), &["read", name]);
        assert_eq!(stdout(&read), "- name: Sam\n", "{name}: {}", stderr(&read));
    }
    let prompt = cli(&t, home.path(), &["--global-user", "read", "prompt"]);
    assert_eq!(
        stdout(&prompt),
        "## User context, every workspace (~/.metis/USER.md)\n- name: Sam\n"
    );
    // Off, the prompt is the reference's.
    assert_eq!(stdout(&cli(&t, home.path(), &["prompt"])), "\n");
    let status = stdout(&cli(&t, home.path(), &["--global-user", "read", "status"]));
    assert!(status.contains("global user memory in"), "{status}");
    assert!(status.contains("~/.metis/USER.md     12 B"), "{status}");
}

#[test]
fn a_workspace_at_home_shows_its_one_user_md_once() {
    let t = TestWorkspace::new();
    // The workspace is the home: its `.metis/` is the user's own.
    let global = GlobalUser::at(t.metis()).agent_writes(true);
    let ws = t.ws.clone().with_global_user(global);
    t.put(MemoryFile::User, "- name: Sam\n");
    let prompt = ws.assemble_system_prompt("").unwrap();
    assert_eq!(prompt, "## User context (USER.md)\n- name: Sam");
    let mut session = ws.session();
    session.system_prompt("").unwrap();
    let added = session.call_tool("memory_add", r#"{"file":"USER.md","entry":"- likes tea"}"#);
    assert_eq!(added.unwrap().result.file, MemoryFile::User);
    // The model's own write keeps it current: its consolidate is held to that version.
    let consolidated = session.call_tool(
        "memory_consolidate",
        r#"{"file":"USER.md","content":"- Sam, likes tea\n"}"#,
    );
    assert!(consolidated.is_ok(), "{consolidated:?}");
    assert_eq!(ws.read(G).unwrap(), "- Sam, likes tea\n");
}
