//! git for `status` and `init`, which only look (and set up): the repository's own
//! configuration can name programs for git to run (a `.git/config` received in an archive,
//! a clone's config someone else wrote), so every setting that runs something is
//! overridden on the command line, which wins over every configuration file. `sync`, which
//! the person runs to push and pull, runs their git as configured (`sync.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Settings that name a program git may run, or a file it reads that a repository could
/// point at a device or a FIFO, each set so that nothing runs and nothing blocks.
///
/// What is not here is unreachable: every transport is refused (`protocol.*` and
/// `GIT_ALLOW_PROTOCOL`), so `core.sshCommand`, `core.gitProxy`, credential helpers,
/// `remote.*.uploadpack` and `url.*.insteadOf` never come into play; aliases cannot
/// shadow the built-in commands run here; merge drivers, `diff.<driver>.command`,
/// textconv and `filter.<driver>.*` are named per driver and run only by commands that
/// merge, diff or read work-tree content into the index, none of which is run here.
const NEUTRALISED: &[(&str, &str)] = &[
    // Run by every command that refreshes the index (`ls-files`, `check-attr`).
    ("core.fsmonitor", "false"),
    ("core.useBuiltinFSMonitor", "false"),
    // `post-index-change` runs when the index is written (untracking USER.md).
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("core.sshCommand", "false"),
    ("diff.external", ""),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("log.showSignature", "false"),
    // `gc --auto` runs the `pre-auto-gc` hook and starts a process of its own.
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),
    ("protocol.file.allow", "never"),
    ("protocol.git.allow", "never"),
    ("protocol.ssh.allow", "never"),
    ("protocol.http.allow", "never"),
    ("protocol.https.allow", "never"),
    ("protocol.ext.allow", "never"),
    // Files git reads that the repository's config may name (`/dev/stdin`, a FIFO):
    // what is ignored and what merges how is then judged by the repository's own
    // files, which is what travels to every clone anyway.
    ("core.attributesFile", "/dev/null"),
    ("core.excludesFile", "/dev/null"),
];

/// Set in git's environment: no prompt, no lock taken only to refresh the index, no
/// pager or editor, no transport, no object fetched on demand (a partial clone's).
const ENVIRONMENT: &[(&str, &str)] = &[
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GIT_EDITOR", "false"),
    ("GIT_SEQUENCE_EDITOR", "false"),
    // A list naming no transport: every one is refused, whatever the config says.
    ("GIT_ALLOW_PROTOCOL", "none"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
    ("GIT_NO_LAZY_FETCH", "1"),
];

/// Removed from git's environment: programs it would run in place of its own.
const REMOVED: &[&str] = &[
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PROXY_COMMAND",
];

/// The longest a looking git may run: one that reads a FIFO or a device the checks
/// before it missed (an index or a config planted as one) is stopped rather than waited
/// on for ever.
pub const GIT_RUNS_AT_MOST: Duration = Duration::from_secs(20);

/// git in `dir` with `args`, the repository's executable settings neutralised, reading
/// nothing from the terminal.
pub fn git_looking(dir: &Path, args: &[&str]) -> Command {
    neutralised(dir, args, None)
}

fn neutralised(dir: &Path, args: &[&str], keep: Option<&str>) -> Command {
    let mut command = Command::new("git");
    command.arg("--no-pager").arg("--no-optional-locks");
    for (key, value) in NEUTRALISED.iter().filter(|(key, _)| Some(*key) != keep) {
        command.arg("-c").arg(format!("{key}={value}"));
    }
    command
        .args(args)
        .current_dir(dir)
        .envs(ENVIRONMENT.iter().copied())
        .stdin(Stdio::null());
    for name in REMOVED {
        command.env_remove(name);
    }
    command
}

/// Runs `command` to its end, or stops it after [`GIT_RUNS_AT_MOST`].
fn finish(mut command: Command, what: &str) -> Result<Output, String> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    // Read as git writes, so that a full pipe never stalls it.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("git {what}: {e}"))? {
            break status;
        }
        if started.elapsed() >= GIT_RUNS_AT_MOST {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "git {what} ran over {} s and was stopped (a file it reads may be a FIFO or a device)",
                GIT_RUNS_AT_MOST.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// Everything `pipe` gives, read on a thread of its own, so that a full pipe never stalls
/// the program writing it.
pub fn drain(
    pipe: Option<impl std::io::Read + Send + 'static>,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Runs a looking git to its end (or until it is stopped).
pub fn run(dir: &Path, args: &[&str]) -> Result<Output, String> {
    finish(git_looking(dir, args), args.first().copied().unwrap_or(""))
}

/// What a looking git printed, trimmed, if it succeeded.
pub fn text(dir: &Path, args: &[&str]) -> Option<String> {
    let out = run(dir, args).ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Where git runs this repository's hooks from when the person commits: `core.hooksPath`
/// as configured is what is asked for here, so it is the one setting not overridden
/// (`rev-parse` runs no hook).
pub fn hooks_dir(dir: &Path) -> Option<PathBuf> {
    let args = ["rev-parse", "--git-path", "hooks"];
    let out = finish(neutralised(dir, &args, Some("core.hooksPath")), "rev-parse").ok()?;
    let hooks = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !hooks.is_empty()).then(|| dir.join(hooks))
}
