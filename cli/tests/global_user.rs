//! Global user memory through the Rust library and the CLI: where the user's own
//! `.metis/` comes from, when it is created and removed, whose it must be, and that a
//! trapped write and a kept instance treat it as they treat the workspace's.

use crate::common;
use crate::global_user_places;

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
            error: StoreError::EmptyEntry(_),
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
    // Trusting foreign workspaces does not reach the person's own memory: whoever owns
    // it reaches every workspace's prompt.
    let trusted = s.t.ws.clone().trust_foreign_metis();
    let refused = trusted.read(G).unwrap_err();
    assert!(
        matches!(&refused, Error::Workspace(m) if m.contains("it is your own memory, which --trust-foreign-metis does not reach")),
        "{refused}"
    );
    assert!(trusted.assemble_system_prompt("").is_err());
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

#[test]
fn edit_saves_the_file_it_was_given() {
    let t = TestWorkspace::new();
    let home = tempfile::tempdir().unwrap();
    let global = home.path().join(".metis");
    fs::create_dir_all(&global).unwrap();
    fs::write(global.join("USER.md"), "- one\n- two\n").unwrap();
    t.put(MemoryFile::User, "- here\n");
    let edit = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--quiet");
        let home = home.path().to_str().unwrap();
        let out = run_cli_with(
            &t,
            &all,
            &[("HOME", home), ("EDITOR", "sed -i -e s/e/E/")],
            Vec::new(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
    };
    edit(&["edit", "~/.metis/USER.md"]);
    assert_eq!(
        fs::read_to_string(global.join("USER.md")).unwrap(),
        "- onE\n- two\n"
    );
    assert_eq!(t.bytes(MemoryFile::User).unwrap(), b"- here\n");
    // With the agent writing the user's own file, `USER.md` is still the workspace's.
    edit(&["--global-user", "write", "edit", "USER.md"]);
    assert_eq!(t.bytes(MemoryFile::User).unwrap(), b"- hEre\n");
    assert_eq!(
        fs::read_to_string(global.join("USER.md")).unwrap(),
        "- onE\n- two\n"
    );
}

#[test]
fn a_directory_under_home_never_takes_the_users_own_metis_as_its_workspace() {
    let home = tempfile::tempdir().unwrap();
    fs::create_dir_all(home.path().join(".metis")).unwrap();
    let download = home.path().join("Downloads/project");
    fs::create_dir_all(&download).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_metis-memory"))
            .args(args)
            .current_dir(&download)
            .env("HOME", home.path())
            .env_remove("METIS_WORKSPACE")
            .output()
            .unwrap()
    };
    let status = json(&run(&["status", "--json"]));
    assert_eq!(status["workspace"], download.to_str().unwrap());
    assert_eq!(status["workspace_from"], "current-directory");
    let add = run(&[
        "--global-user",
        "read",
        "add",
        "USER.md",
        "- from a download",
    ]);
    assert!(add.status.success(), "{}", stderr(&add));
    assert!(download.join(".metis/USER.md").exists());
    assert!(!home.path().join(".metis/USER.md").exists());
    // At home itself, home is the workspace.
    let at_home = std::process::Command::new(env!("CARGO_BIN_EXE_metis-memory"))
        .args(["status", "--json"])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env_remove("METIS_WORKSPACE")
        .output()
        .unwrap();
    assert_eq!(json(&at_home)["workspace_from"], "found");
}

#[test]
fn the_users_own_directory_must_be_named_absolutely() {
    let t = TestWorkspace::new();
    let relative = t.ws.clone().with_global_user(GlobalUser::at("~/.metis"));
    let refused = relative.read(G).unwrap_err();
    assert!(
        matches!(&refused, Error::Workspace(m) if m.contains("must be an absolute path")),
        "{refused}"
    );
    let out = common::run_cli(
        &t,
        &[
            "--global-user",
            "read",
            "--global-user-dir",
            "~/.metis",
            "prompt",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--global-user-dir must be an absolute path"));
    assert!(!t.root().join("~").exists());
}

#[test]
fn a_link_at_the_users_own_directory_must_be_theirs_and_lead_somewhere() {
    let s = Setup::new(true);
    fs::create_dir_all(s.home.path()).unwrap();
    std::os::unix::fs::symlink(s.home.path().join("missing"), s.global_dir()).unwrap();
    let refused = s.t.ws.add_entry(G, "- x").unwrap_err();
    assert!(
        matches!(&refused, Error::Workspace(m) if m.contains("which does not exist")),
        "{refused}"
    );
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: making a link as another user needs root");
        return;
    }
    fs::create_dir(s.home.path().join("missing")).unwrap();
    assert_eq!(s.t.ws.read(G).unwrap(), "");
    std::os::unix::fs::lchown(s.global_dir(), Some(4242), Some(4242)).unwrap();
    // A fresh workspace: a kept instance is checked when it is made, as for `.metis/`.
    let fresh = metis_memory::Workspace::open(s.t.root())
        .with_global_user(GlobalUser::at(s.global_dir()).agent_writes(true));
    let refused = fresh.read(G).unwrap_err();
    assert!(
        matches!(&refused, Error::Workspace(m) if m.contains("made by uid 4242")),
        "{refused}"
    );
}

#[test]
fn at_home_the_cli_holds_a_consolidate_of_user_md_as_the_workspaces() {
    let home = tempfile::tempdir().unwrap();
    let t = TestWorkspace::new();
    let ws_home = t.root();
    fs::create_dir_all(t.metis()).unwrap();
    fs::write(t.path(MemoryFile::User), "- name: Sam\n").unwrap();
    let _ = home;
    // The workspace is the home: its `.metis/` is the user's own.
    let run =
        |args: &[&str]| run_cli_with(&t, args, &[("HOME", ws_home.to_str().unwrap())], Vec::new());
    let session = t.root().join("s.json");
    let prompt = run(&[
        "--global-user",
        "write",
        "prompt",
        "--session",
        session.to_str().unwrap(),
    ]);
    assert_eq!(
        stdout(&prompt),
        "## User context (USER.md)\n- name: Sam\n",
        "{}",
        stderr(&prompt)
    );
    let add = run(&[
        "--global-user",
        "write",
        "call",
        "--session",
        session.to_str().unwrap(),
        "memory_add",
        r#"{"file":"USER.md","entry":"- likes tea"}"#,
    ]);
    assert!(add.status.success(), "{}", stderr(&add));
    let stale = common::sha256_hex(b"- name: Sam\n");
    let consolidate = run(&[
        "--global-user",
        "write",
        "call",
        "--seen",
        &format!("USER.md={stale}"),
        "memory_consolidate",
        r#"{"file":"USER.md","content":"- wiped\n"}"#,
    ]);
    assert!(
        !consolidate.status.success(),
        "a stale consolidate at home went through"
    );
    assert_eq!(
        t.bytes(MemoryFile::User).unwrap(),
        b"- name: Sam\n- likes tea\n"
    );
}

#[test]
fn a_refused_users_directory_refuses_the_call_and_leaves_nothing_behind() {
    let s = Setup::new(false);
    // A home every user can write, without the sticky bit: anyone could replace ~/.metis.
    fs::set_permissions(s.home.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let refused = s.t.ws.add_entry(MemoryFile::Memory, "- x").unwrap_err();
    assert!(
        matches!(&refused, Error::Workspace(m) if m.contains("can be written by every user")),
        "{refused}"
    );
    assert!(
        !s.t.metis().exists(),
        "the refused call left the .metis/ it created"
    );
    assert!(
        !s.global_dir().exists(),
        "the refused call left the ~/.metis it created"
    );
}

/// Every case of `tests/surfaces/global_user_places.json` through the library: the
/// workspace opened where the case says, with the case's options.
#[test]
fn the_places_table_through_the_library() {
    use global_user_places::{Outcome, Place};
    let (cases, _) = global_user_places::cases();
    let mut failures = Vec::new();
    for case in &cases {
        let place = Place::new(case);
        let mut ws = metis_memory::Workspace::open(place.workspace());
        if place.mode() != "off" {
            let global = GlobalUser::at(place.global_dir()).agent_writes(place.mode() == "write");
            ws = ws.with_global_user(global);
        }
        if place.flag("follow_metis_link") {
            ws = ws.follow_metis_link();
        }
        if place.flag("trust_foreign_metis") {
            ws = ws.trust_foreign_metis();
        }
        let outcome = place.run("library", |step| {
            if let Some(tool) = step["tool"].as_str() {
                return match ws.call_tool(tool, &step["input"].to_string()) {
                    Ok(done) => Outcome::Ran {
                        ok: true,
                        text: done.text,
                    },
                    Err(Error::Tool(refused)) => Outcome::Ran {
                        ok: false,
                        text: refused.message,
                    },
                    Err(other) => Outcome::Failed(other.to_string()),
                };
            }
            let add = &step["person_add"];
            let file = MemoryFile::parse(add["file"].as_str().unwrap()).unwrap();
            match ws.add_entry(file, add["entry"].as_str().unwrap()) {
                Ok(_) => Outcome::Ran {
                    ok: true,
                    text: String::new(),
                },
                Err(e @ Error::Workspace(_)) => Outcome::Failed(e.to_string()),
                Err(e) => Outcome::Ran {
                    ok: false,
                    text: e.to_string(),
                },
            }
        });
        failures.extend(outcome.err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every case of `tests/surfaces/global_user_places.json` through the CLI, started where
/// the case says without --workspace (so found as a shell finds it), `HOME` the case's.
#[test]
fn the_places_table_through_the_cli() {
    use global_user_places::{Outcome, Place};
    let (cases, _) = global_user_places::cases();
    let mut failures = Vec::new();
    for case in &cases {
        let place = Place::new(case);
        let run = |args: &[&str]| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_metis-memory"))
                .args(place.cli_args())
                .arg("--json")
                .args(args)
                .current_dir(place.start())
                .env("HOME", place.home())
                .env_remove("METIS_WORKSPACE")
                .output()
                .unwrap();
            let text = format!("{}{}", stdout(&out), stderr(&out));
            if out.status.success() {
                return Outcome::Ran { ok: true, text };
            }
            let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            match reply["error"]["kind"].as_str() {
                Some("workspace") => Outcome::Failed(text),
                _ => Outcome::Ran { ok: false, text },
            }
        };
        let outcome = place.run("cli", |step| {
            if let Some(tool) = step["tool"].as_str() {
                return run(&["call", tool, &step["input"].to_string()]);
            }
            let add = &step["person_add"];
            run(&[
                "add",
                add["file"].as_str().unwrap(),
                add["entry"].as_str().unwrap(),
            ])
        });
        failures.extend(outcome.err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `status` at home says what the component does with the agent's USER.md there, not
/// what the flag alone would mean elsewhere.
#[test]
fn status_at_home_says_where_the_agents_user_md_writes_go() {
    let home = tempfile::tempdir().unwrap();
    fs::create_dir(home.path().join(".metis")).unwrap();
    let status = |mode: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_metis-memory"))
            .args(["--global-user", mode, "status"])
            .current_dir(home.path())
            .env("HOME", home.path())
            .env_remove("METIS_WORKSPACE")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let read = status("read");
    assert!(
        read.contains(
            "it is this workspace's .metis/: the agent reads it, and its USER.md writes are refused"
        ),
        "{read}"
    );
    let write = status("write");
    assert!(
        write.contains("it is this workspace's .metis/: the agent's USER.md facts go there"),
        "{write}"
    );
}
