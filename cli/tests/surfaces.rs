//! The cross-surface suite (`tests/surfaces/behaviours.json`) against the two Rust
//! surfaces: the library's `Session` and the CLI's `prompt --session` / `call --session`.
//! Every row runs on every surface; a step this driver does not know fails the row.
//! The other surfaces' drivers: tests/surfaces/README.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};
use metis_memory::{Error, GlobalUser, Limits, MemoryFile, Session, Workspace};
use serde_json::Value;

/// The options of a `memory_options` step, for the steps after it.
#[derive(Clone, Debug, Default)]
struct MemoryOptions {
    /// The row's own home: the user's own `.metis/` is in it.
    home: PathBuf,
    /// `off`, `read` or `write`.
    global_user: String,
    prompt_budget: bool,
}

impl MemoryOptions {
    /// A workspace at `root` with these options, as an embedder sets them.
    fn workspace(&self, root: &Path) -> Workspace {
        let mut workspace = Workspace::open(root);
        if self.global_user != "off" && !self.global_user.is_empty() {
            let global = GlobalUser::at(self.home.join(".metis"));
            workspace =
                workspace.with_global_user(global.agent_writes(self.global_user == "write"));
        }
        if self.prompt_budget {
            workspace = workspace.with_prompt_budget();
        }
        workspace
    }

    /// The same as the CLI's (and the MCP server's) options.
    fn cli_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if !self.global_user.is_empty() {
            args.extend(["--global-user".to_owned(), self.global_user.clone()]);
            let dir = self.home.join(".metis");
            args.extend(["--global-user-dir".to_owned(), dir.display().to_string()]);
        }
        if self.prompt_budget {
            args.push("--prompt-budget".to_owned());
        }
        args
    }
}

/// One surface: what a driver must be able to do for every row.
trait Surface {
    /// Sets the options every later step runs with.
    fn set_options(&mut self, options: MemoryOptions);
    /// Starts session `name` on `root` (a snapshot session if `snapshot`); the text its
    /// model is shown.
    fn open(&mut self, root: &Path, name: &str, snapshot: bool) -> Result<String, String>;
    /// Starts session `name` on `root`, its model shown nothing.
    fn start(&mut self, _root: &Path, _name: &str) -> Result<(), String> {
        Err("this surface starts no session without showing the memory".into())
    }
    /// Session `name`'s system prompt for its next model call.
    fn prompt(&mut self, name: &str) -> Result<String, String>;
    /// What changed since session `name`'s model was last shown each file.
    fn update(&mut self, name: &str) -> Result<Option<String>, String>;
    /// A tool call with no session (`unheld`: the caller opted out of the hold).
    fn sessionless(
        &mut self,
        _root: &Path,
        _tool: &str,
        _input: &str,
        _unheld: bool,
    ) -> Result<(bool, String), String> {
        Err("this surface has no sessionless tool call".into())
    }
    /// Runs a tool call in session `name`: whether it wrote, and the tool text.
    fn call(&mut self, name: &str, tool: &str, input: &str) -> Result<(bool, String), String>;
    /// The model of `name` has read its results and answers again.
    fn next_response(&mut self, name: &str) -> Result<(), String>;
    /// The version the surface reports.
    fn version(&self) -> Result<String, String>;
    /// `add_entry(file, entry)` on `root` with `fuel` (`None`: the default): `Ok(None)` if
    /// it wrote, `Ok(Some(written))` if it trapped (what the trap said of the write).
    fn add_with_fuel(
        &self,
        _root: &Path,
        _file: &str,
        _entry: &str,
        _fuel: Option<u64>,
    ) -> Result<Option<Option<bool>>, String> {
        Err("this surface sets no fuel".into())
    }
    /// `add_entry(file, entry)` on `root` (the tool call `memory_add` where the surface has
    /// no other write), in a process `tests/surfaces/under` puts under `cause`.
    fn add_under(&self, root: &Path, cause: &str, file: &str, entry: &str)
    -> Result<Under, String>;
    /// Reads `file` on `root` expecting a refusal: the error's kind and text.
    fn read_refused(&self, root: &Path, file: &str) -> Result<(String, String), String>;
    /// `add_entry(file, entry)` on `root` opened read-only: the error's kind and text.
    fn read_only_add(
        &self,
        _root: &Path,
        _file: &str,
        _entry: &str,
    ) -> Result<(String, String), String> {
        Err("this surface has no read-only mode".into())
    }
}

/// The Rust library: one `Session` per name.
#[derive(Default)]
struct Library {
    sessions: BTreeMap<String, Session>,
    options: MemoryOptions,
}

impl Surface for Library {
    fn set_options(&mut self, options: MemoryOptions) {
        self.options = options;
    }

    fn open(&mut self, root: &Path, name: &str, snapshot: bool) -> Result<String, String> {
        let mut session = self.options.workspace(root).session();
        if snapshot {
            session = session.snapshot();
        }
        let prompt = session.system_prompt("").map_err(|e| e.to_string())?;
        self.sessions.insert(name.to_owned(), session);
        Ok(prompt.text)
    }

    fn start(&mut self, root: &Path, name: &str) -> Result<(), String> {
        let session = Session::new(self.options.workspace(root));
        self.sessions.insert(name.to_owned(), session);
        Ok(())
    }

    fn prompt(&mut self, name: &str) -> Result<String, String> {
        let session = self.sessions.get_mut(name).ok_or("no such session")?;
        let prompt = session.system_prompt("").map_err(|e| e.to_string())?;
        Ok(prompt.text)
    }

    fn update(&mut self, name: &str) -> Result<Option<String>, String> {
        let session = self.sessions.get_mut(name).ok_or("no such session")?;
        session.memory_update().map_err(|e| e.to_string())
    }

    fn sessionless(
        &mut self,
        root: &Path,
        tool: &str,
        input: &str,
        unheld: bool,
    ) -> Result<(bool, String), String> {
        let ws = self.options.workspace(root);
        let outcome = if unheld {
            let options = metis_memory::CallOptions {
                scan: metis_memory::ScanPolicy::ALL,
                session: metis_memory::SessionState::empty(),
                hold_unseen: false,
            };
            ws.call_tool_with_options(tool, input, &options)
                .and_then(|called| called.outcome.map_err(Error::Tool))
        } else {
            ws.call_tool(tool, input)
        };
        match outcome {
            Ok(success) => Ok((true, success.text)),
            Err(Error::Tool(refusal)) => Ok((false, refusal.message)),
            Err(other) => Err(other.to_string()),
        }
    }

    fn call(&mut self, name: &str, tool: &str, input: &str) -> Result<(bool, String), String> {
        let session = self.sessions.get_mut(name).ok_or("no such session")?;
        match session.call_tool(tool, input) {
            Ok(success) => Ok((true, success.text)),
            Err(Error::Tool(refusal)) => Ok((false, refusal.message)),
            Err(other) => Err(other.to_string()),
        }
    }

    fn next_response(&mut self, name: &str) -> Result<(), String> {
        self.sessions
            .get_mut(name)
            .ok_or("no such session")?
            .next_response();
        Ok(())
    }

    fn version(&self) -> Result<String, String> {
        Ok(metis_memory::VERSION.to_owned())
    }

    fn add_with_fuel(
        &self,
        root: &Path,
        file: &str,
        entry: &str,
        fuel: Option<u64>,
    ) -> Result<Option<Option<bool>>, String> {
        let limits = Limits {
            fuel: fuel.unwrap_or(Limits::default().fuel),
            ..Limits::default()
        };
        let file = MemoryFile::parse(file).ok_or("no such file")?;
        match Workspace::open(root)
            .with_limits(limits)
            .add_entry(file, entry)
        {
            Ok(_) => Ok(None),
            Err(Error::Trap { written, .. }) => Ok(Some(written)),
            Err(other) => Err(other.to_string()),
        }
    }

    fn read_refused(&self, root: &Path, file: &str) -> Result<(String, String), String> {
        let file = MemoryFile::parse(file).ok_or("no such file")?;
        match Workspace::open(root).read(file) {
            Ok(text) => Err(format!("the read was not refused: {text:?}")),
            Err(error) => Ok((
                metis_memory::json::error_json(&error)["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                error.to_string(),
            )),
        }
    }

    fn add_under(
        &self,
        root: &Path,
        cause: &str,
        file: &str,
        entry: &str,
    ) -> Result<Under, String> {
        let child = serde_json::json!({ "root": root, "file": file, "entry": entry });
        let mut command = under(cause, root, &std::env::current_exe().unwrap());
        command.env(CHILD_ENV, child.to_string());
        outcome_of(command)
    }

    fn read_only_add(
        &self,
        root: &Path,
        file: &str,
        entry: &str,
    ) -> Result<(String, String), String> {
        let file = MemoryFile::parse(file).ok_or("no such file")?;
        match Workspace::open(root).read_only().add_entry(file, entry) {
            Ok(_) => Err("a read-only workspace wrote".into()),
            Err(Error::Store { error, message }) => Ok((error.kind().to_owned(), message)),
            Err(other) => Err(other.to_string()),
        }
    }
}

/// The CLI: a session file per name, written by `prompt --session` and moved by `call
/// --session`; `next_response` becomes `--new-response` on the next call.
#[derive(Default)]
struct Cli {
    root: PathBuf,
    sessions: BTreeMap<String, (PathBuf, bool)>,
    options: MemoryOptions,
}

impl Cli {
    fn run(&self, args: &[&str]) -> Result<std::process::Output, String> {
        Command::new(env!("CARGO_BIN_EXE_metis-memory"))
            .arg("--workspace")
            .arg(&self.root)
            .args(self.options.cli_args())
            .args(args)
            .env_remove("METIS_WORKSPACE")
            .output()
            .map_err(|e| e.to_string())
    }
}

impl Surface for Cli {
    fn set_options(&mut self, options: MemoryOptions) {
        self.options = options;
    }

    fn open(&mut self, root: &Path, name: &str, snapshot: bool) -> Result<String, String> {
        self.root = root.to_owned();
        let file = root.join(format!("session-{name}.json"));
        let mut args = vec!["prompt", "--session", file.to_str().unwrap()];
        if snapshot {
            args.push("--snapshot");
        }
        let out = self.run(&args)?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        self.sessions.insert(name.to_owned(), (file, false));
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn prompt(&mut self, name: &str) -> Result<String, String> {
        let (file, _) = self.sessions.get(name).cloned().ok_or("no such session")?;
        let out = self.run(&["prompt", "--session", file.to_str().unwrap()])?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        // A prompt is a new model call: the session answers again from it.
        self.sessions.insert(name.to_owned(), (file, false));
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn update(&mut self, name: &str) -> Result<Option<String>, String> {
        let (file, _) = self.sessions.get(name).cloned().ok_or("no such session")?;
        let out = self.run(&["--json", "update", "--session", file.to_str().unwrap()])?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let value: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        Ok(value["update"].as_str().map(str::to_owned))
    }

    fn call(&mut self, name: &str, tool: &str, input: &str) -> Result<(bool, String), String> {
        let (file, new_response) = self.sessions.get(name).cloned().ok_or("no such session")?;
        let mut args = vec!["call", "--session", file.to_str().unwrap()];
        if new_response {
            args.push("--new-response");
        }
        args.extend([tool, input]);
        let out = self.run(&args)?;
        self.sessions.insert(name.to_owned(), (file, false));
        let value: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&out.stderr)))?;
        let wrote = value["is_error"] == false;
        if wrote != out.status.success() {
            return Err(format!("exit status {:?} for {value}", out.status));
        }
        Ok((wrote, value["text"].as_str().unwrap_or_default().to_owned()))
    }

    fn next_response(&mut self, name: &str) -> Result<(), String> {
        self.sessions.get_mut(name).ok_or("no such session")?.1 = true;
        Ok(())
    }

    fn read_refused(&self, root: &Path, file: &str) -> Result<(String, String), String> {
        let out = Command::new(env!("CARGO_BIN_EXE_metis-memory"))
            .arg("--workspace")
            .arg(root)
            .args(["read", file, "--json"])
            .env_remove("METIS_WORKSPACE")
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            return Err("the read was not refused".into());
        }
        let value: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&out.stderr)))?;
        Ok((
            value["error"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            value["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        ))
    }

    fn add_under(
        &self,
        root: &Path,
        cause: &str,
        file: &str,
        entry: &str,
    ) -> Result<Under, String> {
        let mut command = under(cause, root, Path::new(env!("CARGO_BIN_EXE_metis-memory")));
        command
            .arg("--workspace")
            .arg(root)
            .args(["add", file, entry, "--json"])
            .env_remove("METIS_WORKSPACE");
        let Under::Ran(out) = run_under(command)? else {
            return Ok(Under::Unavailable);
        };
        let value: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&out.stderr)))?;
        Ok(Under::Done(Outcome {
            ok: out.status.success(),
            kind: value["error"]["kind"].as_str().map(str::to_owned),
            text: value["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        }))
    }

    fn version(&self) -> Result<String, String> {
        let out = Command::new(env!("CARGO_BIN_EXE_metis-memory"))
            .arg("--version")
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.trim()
            .strip_prefix("metis-memory ")
            .map(str::to_owned)
            .ok_or_else(|| format!("unexpected --version output {text:?}"))
    }
}

/// What a write under an OS failure did: whether it wrote, the error's kind, its text.
struct Outcome {
    ok: bool,
    kind: Option<String>,
    text: String,
}

/// A step run under a cause, or not: this machine could not set the cause up.
enum Under<T = Outcome> {
    Done(T),
    Ran(std::process::Output),
    Unavailable,
}

/// Set, with the add to make as JSON, when this binary runs as the library's child under
/// a cause (see `add_under`): `main` makes the add and prints its `Outcome`.
const CHILD_ENV: &str = "METIS_SURFACES_CHILD";

/// `program` run by `tests/surfaces/under cause root`.
fn under(cause: &str, root: &Path, program: &Path) -> Command {
    let mut command = Command::new(repo().join("tests/surfaces/under"));
    command.arg(cause).arg(root).arg(program);
    command
}

/// Runs `command`: its output, or `Unavailable` when `under` could not set its cause up
/// (exit 77); an error if it was killed by a signal.
fn run_under(mut command: Command) -> Result<Under, String> {
    let out = command.output().map_err(|e| e.to_string())?;
    if out.status.code() == Some(77) {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim());
        return Ok(Under::Unavailable);
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&out.status) {
        return Err(format!(
            "killed by signal {signal}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(Under::Ran(out))
}

/// The child's printed `Outcome`.
fn outcome_of(command: Command) -> Result<Under, String> {
    let Under::Ran(out) = run_under(command)? else {
        return Ok(Under::Unavailable);
    };
    let value: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&out.stderr)))?;
    Ok(Under::Done(Outcome {
        ok: value["ok"] == true,
        kind: value["kind"].as_str().map(str::to_owned),
        text: value["text"].as_str().unwrap_or_default().to_owned(),
    }))
}

/// The library's child under a cause: makes the add `CHILD_ENV` names and prints its
/// `Outcome`. It ignores SIGXFSZ, as an embedder under a file-size limit must (Python and
/// Node do by default; the library leaves the process's signals alone).
fn child_add(spec: &str) {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to ignore, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let spec: Value = serde_json::from_str(spec).unwrap();
    let file = MemoryFile::parse(spec["file"].as_str().unwrap()).unwrap();
    let root = spec["root"].as_str().unwrap();
    let outcome = match Workspace::open(root).add_entry(file, spec["entry"].as_str().unwrap()) {
        Ok(_) => serde_json::json!({ "ok": true }),
        Err(error) => serde_json::json!({
            "ok": false,
            "kind": metis_memory::json::error_json(&error)["kind"],
            "text": error.to_string(),
        }),
    };
    println!("{outcome}");
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The release version, from the one place it is written.
fn wit_version() -> String {
    let world = std::fs::read_to_string(repo().join("wit/world.wit")).unwrap();
    world
        .lines()
        .find_map(|l| l.trim().strip_prefix("package metis:memory@"))
        .and_then(|rest| rest.strip_suffix(';'))
        .unwrap()
        .to_owned()
}

fn texts(expect: &Value, key: &str) -> Vec<String> {
    expect
        .get(key)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Checks `text` against `expect`'s `*_contains` / `*_lacks` lists named by `prefix`.
fn check_texts(expect: &Value, prefix: &str, text: &str) -> Result<(), String> {
    for wanted in texts(expect, &format!("{prefix}_contains")) {
        if !text.contains(&wanted) {
            return Err(format!("{prefix} lacks {wanted:?}: {text:?}"));
        }
    }
    for unwanted in texts(expect, &format!("{prefix}_lacks")) {
        if text.contains(&unwanted) {
            return Err(format!("{prefix} holds {unwanted:?}: {text:?}"));
        }
    }
    Ok(())
}

/// A refusal against `expect`: its `kind` (when the surface gives one) and its texts.
fn check_refusal(expect: &Value, kind: Option<&str>, text: &str) -> Result<(), String> {
    if let Some(wanted) = expect.get("kind").and_then(Value::as_str)
        && kind != Some(wanted)
    {
        return Err(format!("kind {kind:?}, expected {wanted}: {text}"));
    }
    check_texts(expect, "text", text)
}

fn known_keys(step: &Value, keys: &[&str]) -> Result<(), String> {
    for key in step.as_object().unwrap().keys() {
        if !keys.contains(&key.as_str()) {
            return Err(format!("this driver does not know the step key {key:?}"));
        }
    }
    Ok(())
}

/// `trap_sweep`: adds that trap at 20 budgets under what the add needs, each retried
/// only as the trap's `written` says; the file must hold the entry exactly once each time.
fn trap_sweep(surface: &dyn Surface, root: &Path, file: &str, entry: &str) -> Result<(), String> {
    let path = root.join(".metis").join(file);
    let given = std::fs::read(&path).unwrap_or_default();
    let attempt = |fuel: Option<u64>| {
        std::fs::write(&path, &given).unwrap();
        surface.add_with_fuel(root, file, entry, fuel)
    };
    if attempt(None)?.is_some() {
        return Err("the add traps even with the default fuel".into());
    }
    let (mut low, mut high) = (1u64, Limits::default().fuel);
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if attempt(Some(mid))?.is_none() {
            high = mid;
        } else {
            low = mid;
        }
    }
    let mut expected = given.clone();
    expected.extend_from_slice(format!("{entry}\n").as_bytes());
    let (mut trapped, mut told) = (0, 0);
    for i in 0..20 {
        let fuel = high / 2 + high * i / 40;
        let Some(written) = attempt(Some(fuel))? else {
            continue;
        };
        trapped += 1;
        told += usize::from(written.is_some());
        let on_disk = std::fs::read(&path).unwrap_or_default();
        let landed = written.unwrap_or(on_disk == expected);
        if !landed {
            surface.add_with_fuel(root, file, entry, None)?;
        }
        let now = std::fs::read(&path).unwrap_or_default();
        if now != expected {
            return Err(format!(
                "fuel {fuel}: written={written:?}, then the file is {:?}",
                String::from_utf8_lossy(&now)
            ));
        }
    }
    if trapped == 0 || told == 0 {
        return Err(format!(
            "{trapped} traps, {told} of them said whether they landed"
        ));
    }
    Ok(())
}

fn run_row(row: &Value, surface: &mut dyn Surface, name: &str) -> Result<(), String> {
    for key in row.as_object().unwrap().keys() {
        if ![
            "name",
            "covers",
            "given",
            "steps",
            "surfaces",
            "surfaces_why",
        ]
        .contains(&key.as_str())
        {
            return Err(format!("this driver does not know the row key {key:?}"));
        }
    }
    if let Some(surfaces) = row.get("surfaces").and_then(Value::as_array)
        && !surfaces.iter().any(|s| s == name)
    {
        eprintln!("{name}: not for this surface: {}", row["surfaces_why"]);
        return Ok(());
    }
    let dir = tempfile::tempdir().unwrap();
    let metis = dir.path().join(".metis");
    // The row's own home, for the user's own `.metis/` (global user memory).
    let home = tempfile::tempdir().unwrap();
    let on_disk = |file: &str| match file.strip_prefix("~/") {
        Some(in_home) => home.path().join(in_home),
        None => metis.join(file),
    };
    for (file, text) in row["given"].as_object().unwrap() {
        let path = on_disk(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text.as_str().unwrap()).unwrap();
    }
    let mut options = MemoryOptions {
        home: home.path().to_owned(),
        ..MemoryOptions::default()
    };
    // Each session's prompt as it was opened, for `prompt`'s `unchanged`.
    let mut first_prompts: BTreeMap<String, String> = BTreeMap::new();
    for (index, step) in row["steps"].as_array().unwrap().iter().enumerate() {
        let at = |e: String| format!("step {}: {e}", index + 1);
        let expect = step.get("expect").cloned().unwrap_or(Value::Null);
        if let Some(name) = step.get("open").and_then(Value::as_str) {
            known_keys(step, &["open", "snapshot", "expect"]).map_err(at)?;
            let snapshot = step.get("snapshot").and_then(Value::as_bool) == Some(true);
            let prompt = surface.open(dir.path(), name, snapshot).map_err(at)?;
            check_texts(&expect, "prompt", &prompt).map_err(at)?;
            first_prompts.insert(name.to_owned(), prompt);
        } else if let Some(name) = step.get("start").and_then(Value::as_str) {
            known_keys(step, &["start"]).map_err(at)?;
            surface.start(dir.path(), name).map_err(at)?;
        } else if let Some(name) = step.get("prompt").and_then(Value::as_str) {
            known_keys(step, &["prompt", "expect"]).map_err(at)?;
            let prompt = surface.prompt(name).map_err(at)?;
            if expect.get("unchanged").and_then(Value::as_bool) == Some(true)
                && first_prompts.get(name) != Some(&prompt)
            {
                return Err(at(format!(
                    "the prompt changed: it was {:?}, it is {prompt:?}",
                    first_prompts.get(name)
                )));
            }
            check_texts(&expect, "prompt", &prompt).map_err(at)?;
        } else if let Some(name) = step.get("update").and_then(Value::as_str) {
            known_keys(step, &["update", "expect"]).map_err(at)?;
            let update = surface.update(name).map_err(at)?;
            match (&update, expect.get("none").and_then(Value::as_bool)) {
                (Some(text), Some(true)) => {
                    return Err(at(format!("expected no update, got {text:?}")));
                }
                (None, Some(false) | None) if expect.get("text_contains").is_some() => {
                    return Err(at("expected an update, got none".into()));
                }
                _ => {}
            }
            check_texts(&expect, "text", update.as_deref().unwrap_or_default()).map_err(at)?;
        } else if let Some(call) = step.get("sessionless") {
            known_keys(step, &["sessionless", "expect"]).map_err(at)?;
            let tool = call["tool"].as_str().unwrap();
            let unheld = call.get("unheld").and_then(Value::as_bool) == Some(true);
            let (wrote, text) = surface
                .sessionless(dir.path(), tool, &call["input"].to_string(), unheld)
                .map_err(at)?;
            if let Some(ok) = expect.get("ok").and_then(Value::as_bool)
                && ok != wrote
            {
                return Err(at(format!("expected ok={ok}, got {wrote}: {text}")));
            }
            check_texts(&expect, "text", &text).map_err(at)?;
        } else if let Some(name) = step.get("call").and_then(Value::as_str) {
            known_keys(step, &["call", "tool", "input", "expect"]).map_err(at)?;
            let tool = step["tool"].as_str().unwrap();
            let (wrote, text) = surface
                .call(name, tool, &step["input"].to_string())
                .map_err(at)?;
            if let Some(ok) = expect.get("ok").and_then(Value::as_bool)
                && ok != wrote
            {
                return Err(at(format!("expected ok={ok}, got {wrote}: {text}")));
            }
            check_texts(&expect, "text", &text).map_err(at)?;
        } else if let Some(name) = step.get("next_response").and_then(Value::as_str) {
            known_keys(step, &["next_response"]).map_err(at)?;
            surface.next_response(name).map_err(at)?;
        } else if let Some(file) = step.get("file").and_then(Value::as_str) {
            known_keys(step, &["file", "is"]).map_err(at)?;
            let bytes = std::fs::read(on_disk(file)).unwrap_or_default();
            let wanted = step["is"].as_str().unwrap();
            if bytes != wanted.as_bytes() {
                return Err(at(format!(
                    "{file} is {:?}, expected {wanted:?}",
                    String::from_utf8_lossy(&bytes)
                )));
            }
        } else if let Some(sweep) = step.get("trap_sweep") {
            known_keys(step, &["trap_sweep"]).map_err(at)?;
            let file = sweep["file"].as_str().unwrap();
            let entry = sweep["entry"].as_str().unwrap();
            trap_sweep(surface, dir.path(), file, entry).map_err(at)?;
        } else if let Some(add) = step.get("read_only_add") {
            known_keys(step, &["read_only_add", "expect"]).map_err(at)?;
            let (kind, text) = surface
                .read_only_add(
                    dir.path(),
                    add["file"].as_str().unwrap(),
                    add["entry"].as_str().unwrap(),
                )
                .map_err(at)?;
            check_refusal(&expect, Some(&kind), &text).map_err(at)?;
        } else if let Some(add) = step.get("add_under") {
            known_keys(step, &["add_under", "expect"]).map_err(at)?;
            let cause = add["cause"].as_str().unwrap();
            let outcome = surface
                .add_under(
                    dir.path(),
                    cause,
                    add["file"].as_str().unwrap(),
                    add["entry"].as_str().unwrap(),
                )
                .map_err(at)?;
            let Under::Done(outcome) = outcome else {
                eprintln!(
                    "{name}: step {} skipped: {cause} cannot be set up here",
                    index + 1
                );
                continue;
            };
            if outcome.ok {
                return Err(at(format!("the add under {cause} wrote")));
            }
            check_refusal(&expect, outcome.kind.as_deref(), &outcome.text).map_err(at)?;
        } else if let Some(mode) = step.get("root_mode").and_then(Value::as_str) {
            known_keys(step, &["root_mode"]).map_err(at)?;
            let mode = u32::from_str_radix(mode, 8).map_err(|e| at(e.to_string()))?;
            let mode = std::os::unix::fs::PermissionsExt::from_mode(mode);
            std::fs::set_permissions(dir.path(), mode).map_err(|e| at(e.to_string()))?;
        } else if let Some(file) = step.get("read_refused").and_then(Value::as_str) {
            known_keys(step, &["read_refused", "expect"]).map_err(at)?;
            let (kind, text) = surface.read_refused(dir.path(), file).map_err(at)?;
            check_refusal(&expect, Some(&kind), &text).map_err(at)?;
        } else if let Some(names) = step.get("metis_holds").and_then(Value::as_array) {
            known_keys(step, &["metis_holds"]).map_err(at)?;
            let mut held: Vec<String> = std::fs::read_dir(&metis)
                .map_err(|e| at(e.to_string()))?
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            held.sort();
            let mut wanted: Vec<String> = names
                .iter()
                .map(|n| n.as_str().unwrap().to_owned())
                .collect();
            wanted.sort();
            if held != wanted {
                return Err(at(format!(".metis/ holds {held:?}, expected {wanted:?}")));
            }
        } else if let Some(set) = step.get("memory_options") {
            known_keys(step, &["memory_options"]).map_err(at)?;
            for key in set.as_object().unwrap().keys() {
                if !["global_user", "prompt_budget"].contains(&key.as_str()) {
                    return Err(at(format!("this driver does not know the option {key:?}")));
                }
            }
            if let Some(global) = set.get("global_user").and_then(Value::as_str) {
                options.global_user = global.to_owned();
            }
            if let Some(budget) = set.get("prompt_budget").and_then(Value::as_bool) {
                options.prompt_budget = budget;
            }
            surface.set_options(options.clone());
        } else if step.get("version").is_some() {
            known_keys(step, &["version"]).map_err(at)?;
            let reported = surface.version().map_err(at)?;
            if reported != wit_version() {
                return Err(at(format!(
                    "reports version {reported}, wit/world.wit says {}",
                    wit_version()
                )));
            }
        } else {
            return Err(at(format!("this driver does not know the step {step}")));
        }
    }
    Ok(())
}

/// A surface's name and how to make a fresh driver of it.
type MakeSurface = fn() -> Box<dyn Surface>;

fn main() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        return child_add(&spec);
    }
    let args = Arguments::from_args();
    let table: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/surfaces/behaviours.json")).unwrap(),
    )
    .unwrap();
    let surfaces: [(&str, MakeSurface); 2] = [
        ("library", || Box::new(Library::default())),
        ("cli", || Box::new(Cli::default())),
    ];
    let mut trials = Vec::new();
    for row in table["behaviours"].as_array().unwrap() {
        for (surface, make) in surfaces {
            let row = row.clone();
            let name = format!("{surface}: {}", row["name"].as_str().unwrap());
            trials.push(Trial::test(name, move || {
                run_row(&row, make().as_mut(), surface).map_err(Failed::from)
            }));
        }
    }
    trials.push(Trial::test("library and cli: file names", || {
        file_names().map_err(Failed::from)
    }));
    libtest_mimic::run(&args, trials).exit();
}

/// `tests/surfaces/file_names.json`: the names the library's `MemoryFile::parse` (which the
/// CLI parses its FILE arguments with) takes, and the ones it refuses.
fn file_names() -> Result<(), String> {
    let path = repo().join("tests/surfaces/file_names.json");
    let table: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for (name, file) in table["accepted"].as_object().unwrap() {
        let parsed = MemoryFile::parse(name).map(MemoryFile::name);
        if parsed != file.as_str() {
            return Err(format!("{name:?} parsed as {parsed:?}, not {file}"));
        }
    }
    for name in table["refused"].as_array().unwrap() {
        let name = name.as_str().unwrap();
        if let Some(file) = MemoryFile::parse(name) {
            return Err(format!("{name:?} was taken as {}", file.name()));
        }
    }
    Ok(())
}
