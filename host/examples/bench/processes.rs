//! Whole processes: the CLI cold (an empty compiled-component cache) and warm, and the
//! reference in a Python process of its own and timed inside one; and the scripts that
//! time the packages and Hermes Agent inside a process of their own.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::stats::Samples;

/// Runs of each command.
pub const RUNS: u32 = 30;
const COLD_RUNS: u32 = 5;

pub struct ProcessRow {
    pub command: String,
    pub cold: Option<Samples>,
    pub warm: Samples,
}

pub struct Processes {
    pub rows: Vec<ProcessRow>,
}

fn run(mut command: Command) {
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{command:?} failed");
}

fn cli(binary: &Path, cache: &Path, workspace: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary);
    command
        .env(metis_memory::CACHE_DIR_ENV, cache)
        .arg("--workspace")
        .arg(workspace)
        .args(args);
    command
}

fn time_runs(
    runs: u32,
    mut make: impl FnMut(u32) -> Command,
    mut between: impl FnMut(u32),
) -> Samples {
    let mut micros = Vec::new();
    for i in 0..runs {
        let command = make(i);
        let started = Instant::now();
        run(command);
        micros.push(started.elapsed().as_secs_f64() * 1e6);
        between(i);
    }
    Samples::from_micros(micros)
}

pub fn measure(
    binary: &Path,
    reference: Option<&Path>,
    workspace: &Path,
    scratch: &Path,
) -> Processes {
    let warm_cache = scratch.join("cache-warm");
    run(cli(binary, &warm_cache, workspace, &["status"]));
    let base: String = crate::base_content();
    let reset = |_| {
        run(cli(
            binary,
            &warm_cache,
            workspace,
            &["consolidate", "MEMORY.md", &base],
        ))
    };
    let mut rows = Vec::new();
    let commands: [(&str, &[&str]); 3] = [
        ("metis-memory read MEMORY.md", &["read", "MEMORY.md"]),
        ("metis-memory prompt", &["prompt"]),
        (
            "metis-memory add MEMORY.md …",
            &["add", "MEMORY.md", "- one more fact"],
        ),
    ];
    for (name, args) in commands {
        let writes = args[0] == "add";
        let cold = time_runs(
            COLD_RUNS,
            |i| {
                cli(
                    binary,
                    &scratch.join(format!("cache-cold-{name}-{i}").replace(' ', "_")),
                    workspace,
                    args,
                )
            },
            |i| {
                if writes {
                    reset(i)
                }
            },
        );
        let warm = time_runs(
            RUNS,
            |_| cli(binary, &warm_cache, workspace, args),
            |i| {
                if writes {
                    reset(i)
                }
            },
        );
        rows.push(ProcessRow {
            command: name.into(),
            cold: Some(cold),
            warm,
        });
    }
    if let Some(store_py) = reference {
        let script = format!(
            "import importlib.util, sys; s = importlib.util.spec_from_file_location('store', {store_py:?}); m = importlib.util.module_from_spec(s); sys.modules['store'] = m; s.loader.exec_module(m); m.MemoryStore(sys.argv[1]).read(m.MemoryFile.MEMORY)"
        );
        let warm = time_runs(
            RUNS,
            |_| {
                let mut c = Command::new("python3");
                c.args(["-c", &script]).arg(workspace);
                c
            },
            |_| {},
        );
        rows.push(ProcessRow {
            command: "python3: reference MemoryStore.read".into(),
            cold: None,
            warm,
        });
    }
    Processes { rows }
}

/// The reference timed inside one Python process (`reference.py`): per operation.
pub fn reference_in_process(
    store_py: &Path,
    workspace: &Path,
    calls: u32,
) -> HashMap<String, Samples> {
    let mut command = Command::new("python3");
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/bench/reference.py"
        ))
        .arg(store_py)
        .arg(workspace)
        .arg(calls.to_string());
    times_printed_by(command, workspace)
}

/// The Python package, installed from the wheel into the environment of `python`.
pub fn python_package(python: &Path, workspace: &Path, calls: u32) -> HashMap<String, Samples> {
    let mut command = Command::new(python);
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/bench/python_host.py"
        ))
        .arg(workspace)
        .arg(calls.to_string());
    times_printed_by(command, workspace)
}

/// Hermes Agent's memory tool, installed (PyPI `hermes-agent`) into the environment of
/// `python`, with `workspace` as its HERMES_HOME: its read of MEMORY.md and its tool add.
pub fn hermes(python: &Path, workspace: &Path, calls: u32) -> HashMap<String, Samples> {
    let mut command = Command::new(python);
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/bench/hermes.py"
        ))
        .arg(workspace)
        .arg(calls.to_string());
    times_printed_by(command, workspace)
}

/// The Node package, installed from the npm tarball as `package` (its directory).
pub fn node_package(package: &Path, workspace: &Path, calls: u32) -> HashMap<String, Samples> {
    let mut command = Command::new("node");
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/bench/node_host.mjs"
        ))
        .arg(package)
        .arg(workspace)
        .arg(calls.to_string());
    times_printed_by(command, workspace)
}

/// Runs a script that times calls on `workspace` and prints `{operation: [µs, ...]}`.
fn times_printed_by(mut command: Command, workspace: &Path) -> HashMap<String, Samples> {
    std::fs::create_dir_all(workspace).unwrap();
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let times: HashMap<String, Vec<f64>> = serde_json::from_slice(&out.stdout).unwrap();
    times
        .into_iter()
        .map(|(op, micros)| (op, Samples::from_micros(micros)))
        .collect()
}
