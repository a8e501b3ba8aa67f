//! `init` and the git part of `status`: what a team needs for memory that travels through
//! git, set up idempotently in the repository holding the workspace.
//!
//! - `.gitattributes` sends `.metis/*.md` to the `metis-memory` merge driver, and this
//!   clone's `.git/config` defines that driver (`metis-memory merge`, see `merge.rs`).
//!   The definition is never committed: a repository cannot name a program for git to
//!   run, so each clone runs `init` once.
//! - A pre-commit hook runs `metis-memory audit`, so poison typed by hand or pulled in is
//!   caught before it is committed. A hook already there is left alone (it is said what
//!   to add). Hooks are judged by what they hold, never by running them: `init`'s own by
//!   its exact text, the pre-commit framework's only as its own shim with a local hook
//!   running exactly the audit (`precommit.rs`); any other that names the program is
//!   "not verified", never "set up".
//! - With `--keep-user-out`, `.gitignore` keeps `.metis/USER.md` (facts about the person)
//!   out of the repository, and a USER.md already committed is taken out of the index.
//!
//! git runs with the repository's own executable settings neutralised (`looking_git.rs`),
//! and every file of the repository's read here is read bounded (`bounded.rs`).

use std::path::{Path, PathBuf};

use crate::bounded;
use crate::looking_git;
use crate::precommit;

/// The merge driver's name in `.gitattributes` and `merge.<name>.*`.
pub const DRIVER: &str = "metis-memory";

/// What ends the driver's command line: an exit other than the driver's own (0, a clean
/// merge; 1, a conflict; above 128, abandon) becomes an abandon, so a program that is gone,
/// not executable or crashed never makes git keep what `%A` holds as a conflict.
const FAIL_SAFE: &str = r#"|| { s=$?; [ "$s" -eq 1 ] && exit 1; exit 129; }"#;

/// The first git that takes a driver's exit above 128 as a failure and abandons the merge
/// (before it, as a conflict that keeps whatever the driver left).
const GIT_FAILS_SAFE: (u32, u32) = (2, 42);

/// git's version, `(major, minor)`, if git runs and says it.
fn git_version(dir: &Path) -> Option<(u32, u32)> {
    let text = git_text(dir, &["--version"])?;
    let version = text.strip_prefix("git version ")?;
    let mut parts = version.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The memory files of every `.metis/` in the repository, at any depth.
const EVERY_MEMORY_FILE: &str = "**/.metis/*.md";

/// The store's own files (every one starts with a dot: `lock.rs`) in every `.metis/`.
const EVERY_STORE_FILE: &str = "**/.metis/.*";

/// Paths that stand for a `.metis/` other than the workspace's, to check a pattern
/// covers it.
const ELSEWHERE_MEMORY: &str = "any/where/.metis/MEMORY.md";
const ELSEWHERE_TEMP: &str = "any/where/.metis/.USER.md.0123456789abcdef.tmp";

/// The hook's line that runs the audit; its presence is what `status` looks for.
const HOOK_LINE: &str = "metis-memory audit";

/// One thing a team needs, as found in the repository.
pub struct Item {
    /// A stable key for `--json`.
    pub key: &'static str,
    pub what: &'static str,
    pub state: State,
    /// What this run did beyond the item's line, for the person (a file untracked).
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Set up before this run.
    Present,
    /// Set up by this run.
    Made,
    Missing,
    /// Not set up, and not done by `init`, for this reason (what to do instead).
    LeftAlone(String),
    /// Not asked for (USER.md is kept in the repository).
    NotAsked,
    /// Something is there that may do it, but cannot be judged without running it, for
    /// this reason: not counted as set up.
    NotVerified(String),
}

impl State {
    pub fn key(&self) -> &'static str {
        match self {
            State::Present => "present",
            State::Made => "made",
            State::Missing => "missing",
            State::LeftAlone(_) => "left-alone",
            State::NotAsked => "not-asked",
            State::NotVerified(_) => "not-verified",
        }
    }
}

/// The repository a workspace is in.
struct Repo {
    top: PathBuf,
    hooks: PathBuf,
    /// The workspace's `.metis`, relative to `top`, with `/`.
    metis: String,
    /// `$GIT_DIR/info/attributes` and `$GIT_DIR/info/exclude`, which git reads beside the
    /// work tree's files.
    info_attributes: PathBuf,
    info_exclude: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> Result<std::process::Output, String> {
    looking_git::run(dir, args)
}

fn git_text(dir: &Path, args: &[&str]) -> Option<String> {
    looking_git::text(dir, args)
}

impl Repo {
    /// The repository holding `workspace`, if it is in one.
    fn of(workspace: &Path) -> Option<Repo> {
        let top = PathBuf::from(git_text(workspace, &["rev-parse", "--show-toplevel"])?);
        let hooks = looking_git::hooks_dir(workspace)?;
        let info = git_text(
            workspace,
            &[
                "rev-parse",
                "--git-path",
                "info/attributes",
                "--git-path",
                "info/exclude",
            ],
        )?;
        let mut info = info.lines().map(|line| workspace.join(line));
        let (info_attributes, info_exclude) = (info.next()?, info.next()?);
        let workspace = workspace.canonicalize().ok()?;
        let relative = workspace.strip_prefix(top.canonicalize().ok()?).ok()?;
        let mut metis = relative.to_string_lossy().replace('\\', "/");
        if !metis.is_empty() {
            metis.push('/');
        }
        metis.push_str(".metis");
        Some(Repo {
            top,
            hooks,
            metis,
            info_attributes,
            info_exclude,
        })
    }

    /// Why git is not asked about `name` (`.gitattributes`, `.gitignore`) when one git
    /// would read for the workspace's `.metis/` (at the top, in each folder down to it,
    /// or `info`'s) is not a regular file: git reads a FIFO or a device it meets, and
    /// would block or grow on it. The top's is what `init` writes, and says so as it
    /// says of a link there; any other is not verified.
    fn git_input_refused(&self, name: &str, info: &Path, line: &str) -> Option<State> {
        if bounded::absent_or_regular(&self.top.join(name)).is_err() {
            return Some(not_a_file(name, line));
        }
        let mut dir = self.top.clone();
        let mut files = Vec::new();
        for part in self.metis.split('/') {
            dir.push(part);
            files.push(dir.join(name));
        }
        files.push(info.to_owned());
        files.iter().find_map(|file| {
            bounded::absent_or_regular(file).err().map(|why| {
                State::NotVerified(format!("{why}, which git would read: git is not asked"))
            })
        })
    }

    /// Whether the workspace's memory files, and those of a `.metis/` anywhere else in
    /// the repository, go to the driver.
    fn attributes_set(&self) -> bool {
        [
            format!("{}/MEMORY.md", self.metis),
            ELSEWHERE_MEMORY.to_owned(),
        ]
        .iter()
        .all(|path| {
            git_text(&self.top, &["check-attr", "merge", "--", path])
                .is_some_and(|line| line.ends_with(&format!("merge: {DRIVER}")))
        })
    }

    /// Whether the store's own files (locks, temporary files) are ignored, in the
    /// workspace's `.metis/` and any other.
    fn store_files_ignored(&self) -> bool {
        [
            format!("{}/.MEMORY.md.lock", self.metis),
            ELSEWHERE_TEMP.to_owned(),
        ]
        .iter()
        .all(|path| {
            git(&self.top, &["check-ignore", "-q", "--no-index", "--", path])
                .is_ok_and(|out| out.status.success())
        })
    }

    /// Store files already committed (a lock committed stalls every clone's next write).
    fn store_files_tracked(&self) -> Vec<String> {
        git_text(&self.top, &["ls-files", "--", ":(glob)**/.metis/.*"])
            .map(|list| list.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Whether the driver is defined, failing safe: a definition from before it did (an
    /// exit that git would take as a conflict) counts as missing, so `init` replaces it.
    fn driver_set(&self) -> bool {
        git_text(
            &self.top,
            &["config", "--get", &format!("merge.{DRIVER}.driver")],
        )
        .is_some_and(|driver| driver.contains(" merge %O %A %B") && driver.ends_with(FAIL_SAFE))
    }

    /// The hook `name` (`pre-commit`, `pre-merge-commit`) as found, judged by what the
    /// files hold: nothing is run to find out.
    fn hook(&self, name: &str) -> Hook {
        let path = self.hooks.join(name);
        let shown = path.display();
        let file = match bounded::open(&path) {
            Ok(Some(file)) => file,
            Ok(None) => return Hook::Missing,
            Err(why) => return Hook::NotVerified(format!("{why}: init does not judge it")),
        };
        if !executable(&file) {
            return Hook::NotRun(format!(
                "{shown} is not executable, so git does not run it: delete it and run init again, or make it executable and add the line `{HOOK_LINE}` to it"
            ));
        }
        let text = match bounded::read_from(&file, &path).map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => return Hook::NotVerified(format!("{shown} is not UTF-8 text")),
            Err(why) => return Hook::NotVerified(why),
        };
        if text == hook_script() {
            return Hook::Present;
        }
        if let Some(other) = init_hook_program(&text) {
            return Hook::NotVerified(format!(
                "{shown} is init's hook for {other}, not for this program: delete it and run init again"
            ));
        }
        if precommit::is_shim(&text, name) {
            return self.framework_hook(name);
        }
        if text.contains("metis-memory") {
            return Hook::NotVerified(format!(
                "{shown} is not init's hook and names metis-memory: init does not run it to find out whether it audits what is staged (delete it and run init again for init's)"
            ));
        }
        Hook::Other
    }

    /// The pre-commit framework's shim is installed as the hook `name`: whether its
    /// configuration has a local hook running exactly the audit.
    fn framework_hook(&self, name: &str) -> Hook {
        let path = self.top.join(precommit::CONFIG);
        let config = match bounded::read(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Hook::Framework,
            Err(why) => {
                return Hook::NotVerified(format!(
                    "the pre-commit framework runs the hooks, and {why}"
                ));
            }
        };
        let Ok(config) = String::from_utf8(config) else {
            return Hook::NotVerified(format!("{} is not UTF-8 text", precommit::CONFIG));
        };
        let commands = [
            HOOK_LINE.to_owned(),
            format!("{} audit", program()),
            format!("{} audit", absolute_program()),
        ];
        match precommit::runs_audit(&config, name, &commands) {
            Ok(true) => Hook::Present,
            Ok(false) => Hook::Framework,
            Err(why) => Hook::NotVerified(format!("{}: {why}", precommit::CONFIG)),
        }
    }

    fn user_tracked(&self) -> bool {
        let path = format!(":(literal){}/USER.md", self.metis);
        git(&self.top, &["ls-files", "--error-unmatch", "--", &path])
            .is_ok_and(|out| out.status.success())
    }

    /// Takes the committed `path` out of the index, the file on disk kept (as `git rm
    /// --cached` does, but without reading the work tree, which could run a filter the
    /// repository's config names). Only when what is staged is what is committed, so
    /// nothing staged is lost. `Err` says why it was not done.
    fn untrack(&self, path: &str) -> Result<(), String> {
        // Hooks defined in the config (`hook.<name>.*`) are named by the repository and
        // are not reached by the neutralised `core.hooksPath`; writing the index runs them.
        if git_text(&self.top, &["config", "--get-regexp", r"^hook\."])
            .is_some_and(|defined| !defined.is_empty())
        {
            return Err(
                "this repository's git config defines hooks (`hook.*`), which writing the index would run"
                    .into(),
            );
        }
        let literal = format!(":(literal){path}");
        let staged = git_text(&self.top, &["ls-files", "--stage", "--", &literal])
            .ok_or("git cannot list the index")?;
        let staged_blob = match staged.lines().collect::<Vec<_>>().as_slice() {
            [line] => line.split_whitespace().nth(1).map(str::to_owned),
            _ => None,
        };
        let committed = git_text(
            &self.top,
            &["rev-parse", "-q", "--verify", &format!("HEAD:{path}")],
        );
        if staged_blob.is_none() || staged_blob != committed {
            return Err(format!(
                "{path} has changes staged that are not committed, which taking it out of the index would drop"
            ));
        }
        let out = git(&self.top, &["update-index", "--force-remove", "--", path])?;
        if !out.status.success() {
            return Err(format!(
                "git update-index: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        if self.user_tracked() {
            return Err(format!("{path} is still in the index"));
        }
        Ok(())
    }

    fn user_ignored(&self) -> bool {
        let path = format!("{}/USER.md", self.metis);
        git(
            &self.top,
            &["check-ignore", "-q", "--no-index", "--", &path],
        )
        .is_ok_and(|out| out.status.success())
    }
}

enum Hook {
    Present,
    Missing,
    /// A hook of someone else's is there.
    Other,
    /// The pre-commit framework manages the hooks, and runs no audit.
    Framework,
    /// Something is there that cannot be judged without running it.
    NotVerified(String),
    /// A hook git does not run, for this reason.
    NotRun(String),
}

/// Whether git would run the open hook (an executable bit set).
fn executable(file: &std::fs::File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.metadata()
            .is_ok_and(|meta| meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        true
    }
}

/// The program named by `text` when it is exactly the hook `init` writes, for another
/// program than this one (one installed elsewhere, or an older copy).
fn init_hook_program(text: &str) -> Option<&str> {
    const MARK: &str = "\u{0}";
    let template = hook_script_for(MARK);
    let (before, after) = template.split_once(MARK)?;
    let program = text.strip_prefix(before)?.strip_suffix(after)?;
    (!program.contains('\n')).then_some(program)
}

/// The hook `init` writes when there is none (as `pre-commit` and `pre-merge-commit`): it
/// audits the memory files of every `.metis/` in the repository as they are about to be
/// committed, from the index, not the work tree (which may differ from what is staged),
/// each `.metis/` in a private scratch workspace of its own. (A path holding a newline is
/// not read.)
fn hook_script() -> String {
    hook_script_for(&program())
}

fn hook_script_for(program: &str) -> String {
    format!(
        r#"#!/bin/sh
# Written by `metis-memory init`: the memory files of every .metis/ as they are about to be
# committed are audited ({HOOK_LINE}), read from the index.
LC_ALL=C
export LC_ALL
staged=$(mktemp -d) || exit 1
trap 'rm -rf "$staged"' EXIT
git -c core.quotePath=false ls-files --cached -- ':(glob)**/.metis/MEMORY.md' ':(glob)**/.metis/USER.md' >"$staged/files" || exit 1
n=0
found=0
while IFS= read -r path; do
    n=$((n + 1))
    mkdir -p "$staged/$n/.metis" || exit 1
    git show ":$path" >"$staged/$n/.metis/${{path##*/}}" || exit 1
    echo "$path" >"$staged/$n/where"
done <"$staged/files"
i=0
while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    if ! {program} --workspace "$staged/$i" audit; then
        echo "(the staged $(cat "$staged/$i/where"))" >&2
        found=1
    fi
done
# A merge must not lose an entry both parents had (a conflict resolved by deleting it):
# METIS_MEMORY_ALLOW_LOSS=1 lets a deliberate consolidation through.
if git rev-parse -q --verify MERGE_HEAD >/dev/null && [ "${{METIS_MEMORY_ALLOW_LOSS:-}}" != 1 ]; then
    while IFS= read -r path; do
        git show "HEAD:$path" 2>/dev/null | sort -u >"$staged/ours"
        git show "MERGE_HEAD:$path" 2>/dev/null | sort -u >"$staged/theirs"
        git show ":$path" | sort -u >"$staged/merged"
        comm -12 "$staged/ours" "$staged/theirs" | comm -23 - "$staged/merged" | grep -v '^[[:space:]]*$' >"$staged/lost"
        if [ -s "$staged/lost" ]; then
            echo "metis-memory: this merge loses entries of $path that both sides had:" >&2
            sed 's/^/  /' "$staged/lost" >&2
            echo "(keep them, or commit with METIS_MEMORY_ALLOW_LOSS=1 if the loss is meant)" >&2
            found=1
        fi
    done <"$staged/files"
fi
exit "$found"
"#,
    )
}

/// How git should run this program: by name when `metis-memory` on the PATH is this
/// binary, else by its absolute path, quoted for the shell git runs the driver with.
fn program() -> String {
    let me = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("metis-memory"))
            .find(|candidate| candidate.is_file())
            .and_then(|found| found.canonicalize().ok())
    });
    if me.is_some() && on_path == me {
        "metis-memory".into()
    } else {
        absolute_program()
    }
}

/// This program by its absolute path, quoted for the shell git runs the driver with: a
/// driver run by name could become another program, or none, as the PATH changes.
fn absolute_program() -> String {
    let me = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_or_else(|_| "metis-memory".into(), |me| me.display().to_string());
    format!("'{}'", me.replace('\'', r"'\''"))
}

/// `Err` when this program runs from where a package runner keeps a copy for one run
/// (`npx`, `uvx`, `pipx run`, `pnpm dlx`, `bunx`): git runs the program `init` names on
/// every commit and merge of memory, long after such a copy is deleted or replaced, so
/// from there `init` sets nothing up and says how to install the program where it stays.
fn refuse_a_passing_copy() -> Result<(), String> {
    let Ok(me) = std::env::current_exe().and_then(|p| p.canonicalize()) else {
        return Ok(());
    };
    let Some(runner) = passing_copy_of(&me) else {
        return Ok(());
    };
    Err(format!(
        "this metis-memory is {runner}'s copy for one run ({}), which may be deleted or \
         replaced at any time, but git would run it on every commit and merge of memory: \
         init sets nothing up with it. Install metis-memory where it stays (`uv tool install \
         metis-memory-cli`, `pipx install metis-memory-cli`, `npm install -g metis-memory-cli`, \
         or `cargo install --path cli` in a clone) and run `metis-memory init` with that",
        me.display()
    ))
}

/// The package runner whose cache holds `program` (a canonical path), if one does: each
/// is known by the folder it runs programs from.
fn passing_copy_of(program: &Path) -> Option<&'static str> {
    program.ancestors().skip(1).find_map(|dir| {
        let name = dir.file_name()?.to_str()?;
        let parent = dir.parent()?;
        let parent_name = parent.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // uv's cache keeps its buckets (`archive-v0`, …) beside its CACHEDIR.TAG.
        let uv_bucket = name
            .rsplit_once("-v")
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            && parent.join("CACHEDIR.TAG").is_file();
        match (parent_name, name) {
            (_, "_npx") => Some("npx"),
            _ if uv_bucket => Some("uvx"),
            ("pipx", ".cache") => Some("pipx run"),
            ("pnpm" | "pnpm-cache", "dlx") => Some("pnpm dlx"),
            (_, bunx) if bunx.starts_with("bunx-") => Some("bunx"),
            _ => None,
        }
    })
}

/// What is set up in the repository holding `workspace`; `None` outside a repository.
pub fn inspect(workspace: &Path, keep_user_out: bool) -> Option<Vec<Item>> {
    let repo = Repo::of(workspace)?;
    Some(items(&repo, keep_user_out))
}

fn items(repo: &Repo, keep_user_out: bool) -> Vec<Item> {
    let state = |set: bool| if set { State::Present } else { State::Missing };
    let hook = |name: &str| match repo.hook(name) {
        Hook::Present => State::Present,
        Hook::Missing => State::Missing,
        Hook::Other => State::LeftAlone(format!(
            "{} is someone else's hook: add the line `{HOOK_LINE}` to it",
            repo.hooks.join(name).display()
        )),
        Hook::Framework => State::LeftAlone(format!(
            "the pre-commit framework's hook is installed and runs no audit: add a local hook running `{HOOK_LINE}` (language: system, pass_filenames: false, always_run: true) to .pre-commit-config.yaml (docs/security.md shows one)"
        )),
        Hook::NotVerified(why) => State::NotVerified(why),
        Hook::NotRun(why) => State::LeftAlone(why),
    };
    let user_line = ignore_pattern(&format!("{}/USER.md", repo.metis));
    let user = match repo.git_input_refused(".gitignore", &repo.info_exclude, &user_line) {
        Some(refused) => refused,
        None => {
            let (ignored, tracked) = (repo.user_ignored(), repo.user_tracked());
            if keep_user_out && (tracked || !ignored) {
                State::Missing
            } else if ignored && tracked {
                State::LeftAlone(format!(
                    "{0}/USER.md is ignored but still committed: `git rm --cached {0}/USER.md` takes it out of the repository and keeps your copy (or run `metis-memory init --keep-user-out`)",
                    repo.metis
                ))
            } else if ignored {
                State::Present
            } else {
                State::NotAsked
            }
        }
    };
    let attributes_line = format!("{EVERY_MEMORY_FILE} merge={DRIVER}");
    let attributes = repo
        .git_input_refused(".gitattributes", &repo.info_attributes, &attributes_line)
        .unwrap_or_else(|| state(repo.attributes_set()));
    let store_files = repo
        .git_input_refused(".gitignore", &repo.info_exclude, EVERY_STORE_FILE)
        .unwrap_or_else(|| match repo.store_files_tracked().as_slice() {
            [] => state(repo.store_files_ignored()),
            tracked => State::LeftAlone(format!(
                "the store's own files are committed ({}): `git rm --cached` them, then run init again",
                tracked.join(", ")
            )),
        });
    vec![
        Item {
            key: "merge_attributes",
            what: ".gitattributes sends every .metis/*.md to the metis-memory merge driver",
            state: attributes,
            note: None,
        },
        Item {
            key: "merge_driver",
            what: "this clone's git config defines the metis-memory merge driver",
            state: match git_version(&repo.top) {
                Some(version) if version < GIT_FAILS_SAFE => State::LeftAlone(format!(
                    "git {}.{} takes a merge driver that fails as a conflict and keeps what it left, so a failed merge could drop entries: upgrade git to {}.{} or later, then run init again",
                    version.0, version.1, GIT_FAILS_SAFE.0, GIT_FAILS_SAFE.1
                )),
                _ => state(repo.driver_set()),
            },
            note: None,
        },
        Item {
            key: "audit_hook",
            what: "a pre-commit hook runs metis-memory audit",
            state: hook("pre-commit"),
            note: None,
        },
        Item {
            key: "merge_audit_hook",
            what: "a pre-merge-commit hook runs metis-memory audit on merges",
            state: hook("pre-merge-commit"),
            note: None,
        },
        Item {
            key: "user_ignored",
            what: ".gitignore keeps .metis/USER.md out of the repository",
            state: user,
            note: None,
        },
        Item {
            key: "store_files_ignored",
            what: ".gitignore keeps the store's locks and temporary files out of the repository",
            state: store_files,
            note: None,
        },
    ]
}

/// What `init` says of a file it would not write through.
fn not_a_file(name: &str, line: &str) -> State {
    State::LeftAlone(format!(
        "{name} is a symbolic link or not a regular file: init does not write through it (add the line `{line}` to the file it should be yourself)"
    ))
}

/// Sets up what is missing; returns every item with what this run did. `Err` outside a
/// repository or when git or a file cannot be written.
pub fn init(workspace: &Path, keep_user_out: bool) -> Result<Vec<Item>, String> {
    let repo = Repo::of(workspace).ok_or_else(|| {
        format!(
            "{} is not in a git repository: init sets up git (run `git init` first)",
            workspace.display()
        )
    })?;
    refuse_a_passing_copy()?;
    let mut found = items(&repo, keep_user_out);
    for item in &mut found {
        if item.state != State::Missing {
            continue;
        }
        match item.key {
            "merge_attributes" => {
                let line = format!("{EVERY_MEMORY_FILE} merge={DRIVER}");
                if !append_line(&repo.top.join(".gitattributes"), &line)? {
                    item.state = not_a_file(".gitattributes", &line);
                    continue;
                }
            }
            "store_files_ignored" => {
                if !append_line(&repo.top.join(".gitignore"), EVERY_STORE_FILE)? {
                    item.state = not_a_file(".gitignore", EVERY_STORE_FILE);
                    continue;
                }
            }
            "merge_driver" => {
                let driver = format!(
                    "{} merge %O %A %B --path %P --marker-size %L {FAIL_SAFE}",
                    absolute_program()
                );
                for (key, value) in [
                    ("name", "metis-memory: merges memory files by entry"),
                    ("driver", driver.as_str()),
                ] {
                    let key = format!("merge.{DRIVER}.{key}");
                    let out = git(&repo.top, &["config", &key, value])?;
                    if !out.status.success() {
                        return Err(format!(
                            "git config {key}: {}",
                            String::from_utf8_lossy(&out.stderr).trim()
                        ));
                    }
                }
            }
            "audit_hook" => write_hook(&repo.hooks.join("pre-commit"), &hook_script())?,
            "merge_audit_hook" => write_hook(&repo.hooks.join("pre-merge-commit"), &hook_script())?,
            "user_ignored" => {
                let path = format!("{}/USER.md", repo.metis);
                let line = ignore_pattern(&path);
                if !repo.user_ignored() && !append_line(&repo.top.join(".gitignore"), &line)? {
                    item.state = not_a_file(".gitignore", &line);
                    continue;
                }
                if repo.user_tracked() {
                    if let Err(why) = repo.untrack(&path) {
                        item.state = State::LeftAlone(format!(
                            "{path} is committed, and init did not take it out of the index: {why}. `git rm --cached {path}` takes it out of the repository and keeps your copy"
                        ));
                        continue;
                    }
                    item.note = Some(format!(
                        "{path} was committed, so init took it out of the index as `git rm --cached {path}` does, keeping your copy: commit that to take it out of the repository (its history still holds it)"
                    ));
                }
            }
            _ => continue,
        }
        item.state = State::Made;
    }
    Ok(found)
}

/// Appends `line`, on a line of its own, to the regular file at `path` (made if missing),
/// never through a link: a repository may commit `.gitattributes` as a link to one of the
/// person's own files (`~/.bashrc`), or hold a FIFO. `Ok(false)` when `path` is not a
/// regular file: it is left alone. Only its last byte is read, however large it is.
fn append_line(path: &Path, line: &str) -> Result<bool, String> {
    use std::io::{Read as _, Seek as _, Write as _};
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => return Ok(false),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(fail(e)),
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
    );
    let mut file = match options.open(path) {
        Ok(file) => file,
        // A link or a FIFO put there since it was looked at.
        #[cfg(unix)]
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENXIO)) => {
            return Ok(false);
        }
        Err(e) => return Err(fail(e)),
    };
    let meta = file.metadata().map_err(fail)?;
    if !meta.is_file() {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    if meta.len() > 0 {
        file.seek(std::io::SeekFrom::End(-1)).map_err(fail)?;
        file.read_exact(&mut last).map_err(fail)?;
    }
    let mut added = String::new();
    if meta.len() > 0 && last[0] != b'\n' {
        added.push('\n');
    }
    added.push_str(line);
    added.push('\n');
    file.write_all(added.as_bytes()).map_err(fail)?;
    Ok(true)
}

/// A `.gitignore` line matching exactly `path`: glob characters and a leading `#` or `!`
/// escaped, and a trailing space kept.
fn ignore_pattern(path: &str) -> String {
    let mut escaped = glob_escaped(path);
    if escaped.starts_with(['#', '!']) {
        escaped.insert(0, '\\');
    }
    if escaped.ends_with(' ') {
        escaped.insert(escaped.len() - 1, '\\');
    }
    escaped
}

fn glob_escaped(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        if matches!(c, '\\' | '*' | '?' | '[') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn write_hook(path: &Path, script: &str) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let mut options = std::fs::OpenOptions::new();
    // Never over someone else's hook, even one made since it was looked for.
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o755);
    use std::io::Write as _;
    options
        .open(path)
        .and_then(|mut file| file.write_all(script.as_bytes()))
        .map_err(fail)
}

/// `items` for a person: one line each, and what to run for what is missing.
pub fn describe(items: &[Item]) -> String {
    let mut text = String::new();
    for item in items {
        let state = match &item.state {
            State::Present => "set up".to_owned(),
            State::Made => "set up now".to_owned(),
            State::Missing => "missing (metis-memory init sets it up)".to_owned(),
            State::LeftAlone(why) => format!("not set up: {why}"),
            State::NotAsked => "not asked for (metis-memory init --keep-user-out)".to_owned(),
            State::NotVerified(why) => format!("not verified: {why}"),
        };
        let note = item
            .note
            .as_ref()
            .map_or_else(String::new, |note| format!("; {note}"));
        text.push_str(&format!("  {}: {state}{note}\n", item.what));
    }
    text
}

/// `items` as `[{"key", "what", "state", "reason"}]`: `reason` says why an item is not
/// set up or not verified, or what this run did beyond setting it up.
pub fn json(items: &[Item]) -> serde_json::Value {
    items
        .iter()
        .map(|item| {
            let reason = match &item.state {
                State::LeftAlone(why) | State::NotVerified(why) => Some(why.as_str()),
                _ => item.note.as_deref(),
            };
            serde_json::json!({
                "key": item.key,
                "what": item.what,
                "state": item.state.key(),
                "reason": reason,
            })
        })
        .collect()
}
