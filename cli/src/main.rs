//! `metis-memory`: inspect and edit a workspace's agent memory from a terminal or a script,
//! serve it to an MCP client (`mcp`), and merge it through git (`merge`, `init`). A
//! binary over the embedding library (`metis-memory`): every decision is the component's,
//! this crate parses, presents, and speaks the protocols.

// First: `say!` and `complain!` are used by every module after it.
#[macro_use]
mod output;

mod bounded;
mod color;
mod diff;
mod dry_run;
mod edit;
mod entries;
mod failure;
mod init;
mod input;
mod locate;
mod looking_git;
mod mcp;
mod merge;
mod precommit;
mod scratch;
mod session;
mod status;
mod sync;
mod writes;

use failure::Failure;
use output::{Output, ToolFormat};
use writes::{call, remove, write};

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args as ClapArgs, CommandFactory, Parser, Subcommand};
use metis_memory::{
    AuditPolicy, CallOptions, ComposeOptions, Edit, Error, FileVersion, MemoryFile, Replacement,
    ScanPolicy, SessionState, Workspace, WriteOptions, WriteResult,
};

use color::ColorWhen;
use failure::{clap_error, usage_error};
use input::{not_an_option, text_or_stdin, within_limit};

/// Inspect and edit the bounded agent memory kept in a workspace's `.metis/`.
///
/// Files: MEMORY.md (workspace facts; soft cap 2048 B, hard cap 4096 B) and USER.md
/// (facts about the user; soft cap 1536 B, hard cap 3072 B). Every command runs the
/// metis-memory WebAssembly component, which sees only `.metis/`.
///
/// Exit status: 0 on success, 1 when the store refuses (the reason is printed on
/// stderr), 2 on a usage error.
#[derive(Parser)]
#[command(name = "metis-memory", version = metis_memory::VERSION, max_term_width = 100)]
struct Args {
    /// The workspace whose `.metis/` holds the memory [default: $METIS_WORKSPACE, else the
    /// nearest directory with a .metis at or above the current one, up to the repository's
    /// root; else that root; else the current directory]
    #[arg(long, short = 'w', global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,

    /// Print machine-readable JSON on stdout (every error too, usage errors included, as
    /// {"error": {"kind", "message", ...}})
    #[arg(long, global = true)]
    json: bool,

    /// Print nothing on success but what was asked for (no write summaries, no "no
    /// findings", no "no changes"); errors and the exit status are kept
    #[arg(long, short = 'q', global = true)]
    quiet: bool,

    /// Colour the over-cap states of `status`: auto (when stdout is a terminal and
    /// NO_COLOR is not set), always, never
    #[arg(long, global = true, value_name = "WHEN", value_enum, default_value_t = ColorWhen::Auto)]
    color: ColorWhen,

    /// Use the workspace's .metis even if it is a symbolic link (refused by default: a
    /// cloned repository could point it at another project's memory)
    #[arg(long, global = true)]
    allow_metis_link: bool,

    /// Use the workspace's .metis even if another user owns it, or it sits in a
    /// directory every user can write (refused by default, as git refuses a repository
    /// another user owns: they could put entries into the agent's prompt)
    #[arg(long, global = true)]
    trust_foreign_metis: bool,

    /// Global user memory: your own USER.md (~/.metis/USER.md, or in --global-user-dir),
    /// composed into the prompt ahead of the workspace's: off; read (the agent's USER.md
    /// writes go to the workspace's); write (they go to your own, so every workspace sees
    /// them). Naming ~/.metis/USER.md (or global-user) as a command's FILE reaches it
    /// whatever this says
    #[arg(long, global = true, value_name = "WHO", value_enum, default_value_t = GlobalUserMode::Off)]
    global_user: GlobalUserMode,

    /// The directory of your own USER.md [default: ~/.metis]
    #[arg(long, global = true, value_name = "DIR")]
    global_user_dir: Option<PathBuf>,

    /// Show each file's fill level in its prompt section's heading ("[67% — 2,744/4,096
    /// bytes]"), so the model consolidates before a write is refused
    #[arg(long, global = true)]
    prompt_budget: bool,

    #[command(subcommand)]
    command: Command,
}

/// `--global-user`: whether your own USER.md is used, and who writes it.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum GlobalUserMode {
    Off,
    Read,
    Write,
}

/// `--no-scan`, on the commands a person writes with.
#[derive(ClapArgs)]
struct ScanFlag {
    /// Skip the memory poisoning scan the tools run (by default the text this write would
    /// leave is scanned, and a match refuses it, exit 1, kind "poisoned")
    #[arg(long)]
    no_scan: bool,
}

/// `--diff`, on every command that writes.
#[derive(ClapArgs)]
struct DiffFlag {
    /// Also print the change made, as a unified diff (with --json, as "diff")
    #[arg(long)]
    diff: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Print a file's content (nothing when it is missing)
    Read {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
    },
    /// Print whether a file exists: true or false, exit status 0 either way; when
    /// something other than a regular file is there (a directory), no command can use it:
    /// an error saying so, exit status 1
    Exists {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
    },
    /// Print a file's size in bytes (0 when it is missing)
    Size {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
    },
    /// Print a file's entries, numbered (an entry is a non-blank line)
    List {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
    },
    /// Append one entry as its own line (surrounding whitespace is stripped)
    Add {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
        /// The entry; must not be empty after stripping (may start with `-`, as a markdown
        /// bullet); `-` or nothing reads it from stdin
        #[arg(allow_hyphen_values = true)]
        entry: Option<String>,
        #[command(flatten)]
        diff: DiffFlag,
        #[command(flatten)]
        scan: ScanFlag,
    },
    /// Replace the one occurrence of OLD with NEW (NEW may be empty, to delete)
    Replace {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
        /// Text that must occur exactly once in the file (not empty)
        #[arg(allow_hyphen_values = true)]
        old: String,
        /// Its replacement
        #[arg(allow_hyphen_values = true)]
        new: String,
        #[command(flatten)]
        diff: DiffFlag,
        #[command(flatten)]
        scan: ScanFlag,
    },
    /// Remove entry N, as `list` numbers them, and its line
    ///
    /// One conditional consolidate: if the file changes between the read that found
    /// entry N and the write, nothing is removed (exit 1), so it never removes another line.
    Remove {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
        /// The entry's number, from `list`
        #[arg(value_parser = clap::value_parser!(u64).range(1..))]
        n: u64,
        /// Remove it only if the file's SHA-256 is still HASH (the version listed, e.g.
        /// from `list --json`); otherwise exit 1 and change nothing
        #[arg(long, value_name = "HASH", value_parser = parse_hash)]
        expect_hash: Option<String>,
        #[command(flatten)]
        diff: DiffFlag,
    },
    /// Replace the whole file with CONTENT, byte for byte
    Consolidate {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
        /// The new content; `-` or nothing reads it from stdin, which must not be empty
        /// (to empty the file, pass "" as CONTENT)
        #[arg(allow_hyphen_values = true)]
        content: Option<String>,
        /// Write only if the file's SHA-256 is still HASH (the version CONTENT was made
        /// from, e.g. from `status --json` or `sha256sum`); otherwise exit 1 and change
        /// nothing
        #[arg(long, value_name = "HASH", value_parser = parse_hash)]
        expect_hash: Option<String>,
        #[command(flatten)]
        diff: DiffFlag,
        #[command(flatten)]
        scan: ScanFlag,
    },
    /// Edit a file in $VISUAL or $EDITOR (else vi), then write it as one consolidate
    ///
    /// The editor opens a temporary copy. On save, the copy is written with the caps and
    /// the poisoning scan checked, only if the file is still the version copied; when
    /// refused, the reason is printed and the copy is kept (its path printed), exit 1. An
    /// unchanged copy writes nothing.
    Edit {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
        #[command(flatten)]
        diff: DiffFlag,
    },
    /// Print the system prompt an agent host would send: base, USER.md, MEMORY.md
    ///
    /// With --json: {"prompt", "sources"}, each source with the SHA-256 of the file it was
    /// composed from (what `consolidate --expect-hash` takes) and the audit's findings.
    Prompt {
        /// The base system prompt the memory sections follow
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        base: String,
        /// What to do with a file the memory audit finds something in: off, report (on
        /// stderr), omit (leave it out of the prompt, and report), refuse (exit 1)
        #[arg(long, default_value = "omit", value_name = "POLICY", value_parser = parse_audit_policy)]
        audit: AuditPolicy,
        /// Start a session in FILE (JSON): the versions this prompt shows the model, which
        /// `call --session FILE` holds its tool calls to. If FILE holds a snapshot session,
        /// print the prompt it froze for this base instead, byte for byte
        #[arg(long, value_name = "FILE")]
        session: Option<PathBuf>,
        /// With --session: start a snapshot session, whose prompt stays byte-identical
        /// for the conversation (a provider's prompt cache keeps it); `update --session
        /// FILE` gives what others wrote since, to append to the conversation
        #[arg(long, requires = "session")]
        snapshot: bool,
    },
    /// What changed in memory since the session's model was last shown each file: text to
    /// append to the conversation (at the start of the next user turn), or nothing
    ///
    /// For a snapshot session (`prompt --session FILE --snapshot`), whose prompt never
    /// changes: each file another session or a person changed is printed whole, between
    /// marker lines, and counts as seen from now on. Prints nothing when nothing changed
    /// (`--json`: {"update": null}).
    Update {
        /// The session (written by `prompt --session FILE`)
        #[arg(long, value_name = "FILE")]
        session: PathBuf,
        /// What to do with a file the memory audit finds something in: off, report, omit
        /// (withhold it, and say so), refuse
        #[arg(long, default_value = "omit", value_name = "POLICY", value_parser = parse_audit_policy)]
        audit: AuditPolicy,
    },
    /// Scan the files on disk with the poisoning scan's rules and list what matches
    ///
    /// One line per finding: FILE:LINE: [rule] what matched. Exit status 1 when anything
    /// is found, so it works as a pre-commit hook or a CI step; 0 when nothing is.
    Audit {
        /// Only this file [default: both]
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: Option<MemoryFile>,
    },
    /// Show both files against their soft and hard caps, with their hashes, and what
    /// `init` set up in the repository
    Status,
    /// List the adds that were acknowledged and that their file no longer holds, and add
    /// them again
    ///
    /// git rewrites the work tree without asking the store (a stash, a reset, an aborted
    /// rebase), so an add acknowledged just before can be undone. Every add made in a git
    /// repository is journaled in that clone's git directory; this lists the ones missing
    /// now (newest first). Exit status 0 either way.
    Recover {
        /// Add them again (oldest first), scanned as `add` is
        #[arg(long, conflicts_with = "forget")]
        add: bool,
        /// Forget them: they were meant to go
        #[arg(long)]
        forget: bool,
    },
    /// Commit the memory files, fetch, merge the upstream branch (the memory files by
    /// entry) and push, without losing a write
    ///
    /// The commit and the merge run under the store's write hold: an agent's write waits
    /// for them (or is refused busy, to retry) and never lands while git rewrites a
    /// memory file, as it can under a plain `git pull`. Needs an upstream branch and
    /// `init` (the merge driver). Exit status 1 when git fails (a conflict: git's own
    /// state is left for you, as after `git merge`).
    Sync {
        /// Commit and merge, but do not push
        #[arg(long)]
        no_push: bool,
    },
    /// Set up the repository for memory that travels through git (idempotent)
    ///
    /// The merge driver (a .gitattributes line, and this clone's git config, which is
    /// never committed), a pre-commit hook running `metis-memory audit` (a hook already
    /// there, or the pre-commit framework's, is left alone and you are told what to add),
    /// and with --keep-user-out a .gitignore line keeping .metis/USER.md out of the
    /// repository. Run it once in each clone; a second run changes nothing.
    Init {
        /// Keep .metis/USER.md (facts about you) out of the repository
        #[arg(long)]
        keep_user_out: bool,
    },
    /// Print the memory tools' definitions as a JSON array for an LLM API
    Tools {
        /// anthropic: {"name", "description", "input_schema"}; openai: {"type":
        /// "function", "function": {"name", "description", "parameters"}}
        #[arg(long, value_enum, default_value_t = ToolFormat::Anthropic)]
        format: ToolFormat,
    },
    /// Run one tool call and print {"is_error", "text", "result", "events"} as JSON
    ///
    /// Exit status 0 when the call wrote the file (or, with --dry-run, would write it), 1
    /// when it was refused (invalid input, unknown tool, or a write the store rejected:
    /// nothing changed).
    Call {
        /// memory_add, memory_replace or memory_consolidate
        tool: String,
        /// The tool input as JSON; `-` or nothing reads it from stdin
        #[arg(allow_hyphen_values = true)]
        input: Option<String>,
        /// Skip the memory poisoning scan (hidden characters, injection patterns)
        #[arg(long)]
        no_scan: bool,
        /// The session (from `prompt --session FILE`) the call is held to, and moves: a
        /// memory_consolidate of a file that changed since the model saw it is refused
        #[arg(long, value_name = "FILE", conflicts_with = "seen")]
        session: Option<PathBuf>,
        /// With --session: the model has read the results of its last response (what a
        /// refusal showed it now counts as seen)
        #[arg(long, requires = "session")]
        new_response: bool,
        /// FILE=HASH: the version of FILE the model has seen; a memory_consolidate of FILE
        /// is refused unless the file is still that version (repeatable)
        #[arg(long, value_name = "FILE=HASH", value_parser = parse_seen)]
        seen: Vec<FileVersion>,
        /// Let a memory_consolidate through without --session or --seen, whatever the
        /// model saw (by default it is a usage error: it could drop what another session
        /// wrote)
        #[arg(long, conflicts_with_all = ["session", "seen"])]
        unheld: bool,
        /// Write nothing: run the call on a temporary copy of both files and print what it
        /// would change, as a unified diff ("diff" in the JSON, with "dry_run": true)
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        diff: DiffFlag,
    },
    /// Serve the memory to an MCP client over stdio (the Model Context Protocol)
    ///
    /// Tools: memory_add, memory_replace, memory_consolidate, as `tools` prints them.
    /// Resources, read fresh on every request, with subscriptions: memory://MEMORY.md,
    /// memory://USER.md, memory://prompt. Prompt: `memory`. Standard output carries
    /// only protocol messages; logs go to stderr. Exit status 0 at the end of input, 2
    /// when the workspace named does not exist, 1 when its .metis cannot be used.
    Mcp {
        /// Skip the memory poisoning scan on tool calls (as `call --no-scan`)
        #[arg(long)]
        no_scan: bool,
        /// What the memory audit does to what reaches the model (the instructions, the
        /// resources, the prompt): `omit` leaves a flagged file out and withholds it
        /// from the tools, `report` serves it under a warning, `refuse` serves nothing
        /// of it, `off` skips the audit
        #[arg(long, value_name = "POLICY", default_value = "omit", value_parser = parse_audit_policy)]
        audit: AuditPolicy,
    },
    /// Write the embedded WebAssembly component, for hosts in other languages
    /// (wasmtime-py, jco) or for `wasm-tools component wit`
    Component {
        /// Where to write it; `-` writes to stdout
        #[arg(long, short = 'o', value_name = "FILE")]
        output: PathBuf,
    },
    /// Print a completion script for SHELL, generated from these commands
    ///
    /// e.g. `metis-memory completions bash > ~/.local/share/bash-completion/completions/metis-memory`,
    /// `metis-memory completions zsh > "${fpath[1]}/_metis-memory"`,
    /// `metis-memory completions fish > ~/.config/fish/completions/metis-memory.fish`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Merge a memory file three ways by entry: git's merge driver for .metis/*.md
    ///
    /// Entries added on either side are kept once, an entry removed on one side and
    /// untouched on the other is removed, an entry changed differently on both sides is
    /// a conflict with git's markers; a merged file over its hard cap, or that the memory
    /// audit flags, is a conflict whose reason is on stderr. A side that is not UTF-8, or
    /// another file, is left to `git merge-file`. Writes the result to OURS; exit 0 when
    /// it stands, 1 for a conflict. `metis-memory init` sets git up to run it.
    Merge {
        /// The common ancestor's version (git's %O)
        base: PathBuf,
        /// Our version (git's %A); the merged text is written here
        ours: PathBuf,
        /// Their version (git's %B)
        theirs: PathBuf,
        /// The file's path in the repository (git's %P): its name says whose cap applies
        #[arg(long, value_name = "PATH")]
        path: Option<PathBuf>,
        /// The length of conflict markers (git's %L)
        #[arg(long, value_name = "N", default_value_t = 7)]
        marker_size: usize,
    },
}

/// FILE: `MEMORY.md` or `USER.md` (or `memory`, `user`).
fn parse_file(name: &str) -> Result<MemoryFile, String> {
    // `~/.metis/USER.md` unquoted reaches here expanded by the shell.
    let expanded = metis_memory::GlobalUser::in_home()
        .is_some_and(|home| std::path::Path::new(name) == home.dir().join("USER.md"));
    if expanded {
        return Ok(MemoryFile::GlobalUser);
    }
    MemoryFile::parse(name).ok_or_else(|| {
        format!(
            "expected MEMORY.md or USER.md (or memory, user), or ~/.metis/USER.md (or global-user) for your own, got `{name}`"
        )
    })
}

impl Command {
    /// The file the command names, if it names one.
    fn file(&self) -> Option<MemoryFile> {
        match self {
            Command::Read { file }
            | Command::Exists { file }
            | Command::Size { file }
            | Command::List { file }
            | Command::Add { file, .. }
            | Command::Replace { file, .. }
            | Command::Remove { file, .. }
            | Command::Consolidate { file, .. }
            | Command::Edit { file, .. } => Some(*file),
            Command::Audit { file, .. } => *file,
            _ => None,
        }
    }
}

/// Global user memory as the options say: `None` when off (unless the command names
/// the user's own file, which is then read as under `read`).
fn global_user(args: &Args) -> Result<Option<metis_memory::GlobalUser>, String> {
    let mode = match (args.global_user, args.command.file()) {
        (GlobalUserMode::Off, Some(MemoryFile::GlobalUser)) => GlobalUserMode::Read,
        (mode, _) => mode,
    };
    if mode == GlobalUserMode::Off {
        return Ok(None);
    }
    let global = match &args.global_user_dir {
        Some(dir) if !dir.is_absolute() => {
            return Err(format!(
                "--global-user-dir must be an absolute path, got `{}` (a shell expands `~` only at the start of a word, and an MCP configuration not at all: write the full path)",
                dir.display()
            ));
        }
        Some(dir) => metis_memory::GlobalUser::at(dir),
        None => metis_memory::GlobalUser::in_home().ok_or(
            "global user memory needs your home directory: HOME is unset or not absolute (or pass --global-user-dir)",
        )?,
    };
    Ok(Some(global.agent_writes(mode == GlobalUserMode::Write)))
}

/// HASH: a SHA-256 as 64 hex digits.
fn parse_hash(hash: &str) -> Result<String, String> {
    if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(hash.to_ascii_lowercase())
    } else {
        Err(format!("expected a SHA-256 as 64 hex digits, got `{hash}`"))
    }
}

/// A person's write: scanned as the tools' writes are, unless `--no-scan`.
fn scanned(
    ws: &Workspace,
    file: MemoryFile,
    scan: ScanFlag,
    edit: Edit,
    if_unchanged: Option<String>,
) -> Result<WriteResult, Error> {
    let scan = scan_policy(scan.no_scan);
    ws.write(file, &edit, &WriteOptions { if_unchanged, scan })
}

/// FILE=HASH, for `call --seen`.
fn parse_seen(text: &str) -> Result<FileVersion, String> {
    let (file, hash) = text
        .split_once('=')
        .ok_or_else(|| format!("expected FILE=HASH, got `{text}`"))?;
    Ok(FileVersion {
        file: parse_file(file)?,
        sha256: parse_hash(hash)?,
    })
}

fn parse_audit_policy(name: &str) -> Result<AuditPolicy, String> {
    AuditPolicy::parse(name)
        .ok_or_else(|| format!("expected off, report, omit or refuse, got `{name}`"))
}

fn main() -> ExitCode {
    // A write past a file-size limit (`ulimit -f`) must fail as a store error
    // (`file-too-large`, nothing written), not end the process mid-write with its lock
    // and temporary file left behind.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore" before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(error) => return clap_error(error),
    };
    if let Command::Completions { shell } = args.command {
        return completions(shell);
    }
    // Run by git in the repository it merges: no workspace is looked for.
    if let Command::Merge {
        base,
        ours,
        theirs,
        path,
        marker_size,
    } = args.command
    {
        return merge::run(&merge::MergeArgs {
            base,
            ours,
            theirs,
            path,
            marker_size,
        });
    }
    let global = match global_user(&args) {
        Ok(global) => global,
        Err(message) => {
            usage_error(args.json, &message);
            return ExitCode::from(2);
        }
    };
    let (root, located) = match locate::locate(args.workspace, args.global_user_dir.as_deref()) {
        Ok(found) => found,
        Err(message) => {
            usage_error(args.json, &message);
            return ExitCode::from(2);
        }
    };
    let mut workspace = Workspace::open(root);
    if let Some(global) = global {
        workspace = workspace.with_global_user(global);
    }
    if args.prompt_budget {
        workspace = workspace.with_prompt_budget();
    }
    if args.allow_metis_link {
        workspace = workspace.follow_metis_link();
    }
    if args.trust_foreign_metis {
        workspace = workspace.trust_foreign_metis();
    }
    if let Command::Mcp { no_scan, audit } = args.command {
        return mcp::serve(workspace, scan_policy(no_scan), audit);
    }
    let out = Output {
        json: args.json,
        quiet: args.quiet,
        color: args.color.enabled(),
        located,
    };
    match run(&workspace, args.command, &out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Store(error)) => {
            out.error(&error);
            ExitCode::from(1)
        }
        Err(Failure::Refused) => ExitCode::from(1),
        Err(Failure::Cli { kind, message }) => {
            out.cli_error(kind, &message);
            ExitCode::from(1)
        }
        Err(Failure::Usage(message)) => {
            usage_error(out.json, &message);
            ExitCode::from(2)
        }
    }
}

fn run(ws: &Workspace, command: Command, out: &Output) -> Result<(), Failure> {
    match command {
        Command::Read { file } => out.content(file, &ws.read(file)?),
        Command::Exists { file } => out.exists(file, ws.exists(file)?),
        Command::Size { file } => out.size(file, ws.size_bytes(file)?),
        Command::List { file } => {
            let text = ws.read(file)?;
            out.entries(file, &text, &entries::entries(&text));
        }
        Command::Add {
            file,
            entry,
            diff,
            scan,
        } => {
            let entry = text_or_stdin(entry, "ENTRY")?;
            write(ws, out, file, diff.diff, || {
                scanned(ws, file, scan, Edit::AddEntry(entry), None)
            })?;
        }
        Command::Replace {
            file,
            old,
            new,
            diff,
            scan,
        } => {
            not_an_option(&old)?;
            not_an_option(&new)?;
            within_limit(&old, "OLD")?;
            within_limit(&new, "NEW")?;
            // The store counts an empty OLD as occurring between every byte ("appears 5
            // times" in a 4-byte file): true to its contract, no help to a person.
            if old.is_empty() {
                return Err(Failure::Usage(
                    "OLD is empty, and an empty text occurs everywhere, so there is no one place to replace: give the text to replace (to add an entry, use `metis-memory add`; to rewrite the file, `metis-memory edit` or `metis-memory consolidate`)".to_owned(),
                ));
            }
            write(ws, out, file, diff.diff, || {
                let replacement = Replacement {
                    old_text: old,
                    new_text: new,
                };
                scanned(ws, file, scan, Edit::Replace(replacement), None)
            })?;
        }
        Command::Remove {
            file,
            n,
            expect_hash,
            diff,
        } => remove(ws, out, file, n, expect_hash, diff.diff)?,
        Command::Consolidate {
            file,
            content,
            expect_hash,
            diff,
            scan,
        } => {
            let content = text_or_stdin(content, "CONTENT")?;
            let edit = Edit::Consolidate(content);
            write(ws, out, file, diff.diff, || {
                scanned(ws, file, scan, edit, expect_hash)
            })?;
        }
        Command::Edit { file, diff } => edit::edit(ws, out, file, diff.diff)?,
        Command::Prompt {
            base,
            audit,
            session,
            snapshot,
        } => {
            within_limit(&base, "the --base text")?;
            match session {
                Some(path) => {
                    let _lock = session::lock(&path)?;
                    let mut held = if !snapshot && session::holds_snapshot(&path) {
                        session::load(ws, &path)?.resume(ws).with_audit(audit)
                    } else if snapshot {
                        ws.session().with_audit(audit).snapshot()
                    } else {
                        ws.session().with_audit(audit)
                    };
                    let prompt = held.system_prompt(&base)?;
                    session::save(&path, &held)?;
                    out.prompt(&prompt)
                }
                None => {
                    let options = ComposeOptions {
                        audit,
                        strict: false,
                    };
                    out.prompt(&ws.compose(&base, options)?)
                }
            }
        }
        Command::Update { session, audit } => {
            let _lock = session::lock(&session)?;
            let mut held = session::load(ws, &session)?.resume(ws).with_audit(audit);
            let pending = session::Pending::create(&session)?;
            let update = held.memory_update()?;
            // Printed before the session says it was shown: a session saved after a lost
            // print would hold the model to a version it never got.
            out.memory_update(update.as_deref())?;
            pending.commit(&held)?;
        }
        Command::Audit { file } => {
            let files = file.map_or_else(|| ws.memory_files(), |file| vec![file]);
            let found = files
                .into_iter()
                .map(|file| Ok((file, ws.audit(file)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            if !out.audit(&found) {
                return Err(Failure::Refused);
            }
        }
        Command::Status => out.status(ws)?,
        Command::Sync { no_push } => out.synced(&sync::sync(ws, !no_push)?),
        Command::Recover { add, forget } => {
            let lost = ws.lost_adds();
            if add {
                for gone in lost.iter().rev() {
                    let edit = Edit::AddEntry(gone.entry.clone());
                    let options = WriteOptions {
                        if_unchanged: None,
                        scan: ScanPolicy::ALL,
                    };
                    ws.write(gone.file, &edit, &options)?;
                }
            } else if forget {
                ws.forget_lost_adds(&lost);
            }
            out.lost_adds(&lost, add, forget);
        }
        Command::Init { keep_user_out } => {
            let items = init::init(ws.root(), keep_user_out).map_err(|message| Failure::Cli {
                kind: "init",
                message,
            })?;
            out.init(&items);
        }
        Command::Tools { format } => out.tool_definitions(&ws.tool_definitions()?, format),
        Command::Call {
            tool,
            input,
            no_scan,
            session,
            new_response,
            seen,
            unheld,
            dry_run,
            diff,
        } => {
            let input = text_or_stdin(input, "JSON")?;
            let scan = scan_policy(no_scan);
            if let Some(path) = session {
                let _lock = session::lock(&path)?;
                let mut held = session::load(ws, &path)?.resume(ws).with_scan(scan);
                if new_response {
                    held.next_response();
                }
                if dry_run {
                    let options = held.options();
                    dry_run::call(ws, out, &tool, &input, &options)?;
                    return Ok(());
                }
                // Made now, so a session that cannot be saved stops the call before it
                // writes: after a write, failing would invite a retry that repeats it.
                let pending = session::Pending::create(&path)?;
                let outcome = call(ws, out, &tool, &input, diff.diff, |tool, input| {
                    held.call_tool(tool, input)
                });
                if let Err(Failure::Cli { message, .. }) = pending.commit(&held) {
                    use std::io::Write as _;
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "warning: {message}; the call itself is as reported"
                    );
                }
                return outcome;
            }
            if tool == "memory_consolidate" && !unheld {
                session::require_seen(ws, &input, &seen)?;
            }
            let options = CallOptions {
                session: SessionState {
                    seen,
                    ..SessionState::empty()
                },
                ..CallOptions::unheld(scan)
            };
            if dry_run {
                dry_run::call(ws, out, &tool, &input, &options)?;
            } else {
                call(ws, out, &tool, &input, diff.diff, |tool, input| {
                    let called = ws.call_tool_with_options(tool, input, &options)?;
                    called.result()
                })?;
            }
        }
        Command::Component { output } => write_component(&output)?,
        Command::Mcp { .. } | Command::Completions { .. } | Command::Merge { .. } => {
            unreachable!("`mcp`, `completions` and `merge` are served before `run`")
        }
    }
    Ok(())
}

/// Both parts of the poisoning scan, or neither with `--no-scan`.
fn scan_policy(no_scan: bool) -> ScanPolicy {
    if no_scan {
        ScanPolicy::OFF
    } else {
        ScanPolicy::ALL
    }
}

/// The completion script for `shell`, made whole before it is written: the generator
/// panics on a write error, and a closed pipe must not turn into a panic.
fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Args::command(), "metis-memory", &mut script);
    let _ = std::io::stdout().write_all(&script);
    ExitCode::SUCCESS
}

fn write_component(output: &std::path::Path) -> Result<(), Failure> {
    let written = if output.as_os_str() == "-" {
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(metis_memory::COMPONENT_WASM)
            .and_then(|()| stdout.flush())
        {
            // The reader has what it wanted (`| head -c 8`): stop quietly, as Unix
            // tools do on a closed pipe.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    } else {
        write_new_file(output, metis_memory::COMPONENT_WASM)
    };
    written.map_err(|e| Failure::Usage(format!("cannot write {}: {e}", output.display())))
}

/// Writes `bytes` to a new file renamed into place at `path`: whatever stands there (a
/// link a repository planted, a FIFO) is replaced, never followed or opened.
fn write_new_file(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}
