//! `scripts/bench`: every cost side by side, written as markdown to stdout (the script
//! puts it in BENCHMARKS.md). Usage: bench CALLS CLI_BINARY [REFERENCE_STORE_PY]
//!
//! A benchmark, not a test: nothing here passes or fails; the targets are reported as
//! met or not.

mod floor;
mod processes;
mod size;
mod stats;
// Shared with the build, which uses all of it.
#[allow(dead_code)]
#[path = "../../wasm_sections.rs"]
mod wasm_sections;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use metis_memory::{MemoryFile, Workspace};
use metis_memory_core::Edit;

use floor::Floor;
use stats::{Samples, ratio};

const M: MemoryFile = MemoryFile::Memory;
const BASE_PROMPT: &str = "You are helpful.";

fn base_content() -> String {
    (0..40)
        .map(|i| format!("- remembered fact {i} about the build\n"))
        .collect()
}

/// The replace of call `i`: back and forth, so the file keeps its size.
fn replace_args(i: u32) -> (&'static str, &'static str) {
    if i.is_multiple_of(2) {
        ("fact 7 ", "fact 7x ")
    } else {
        ("fact 7x ", "fact 7 ")
    }
}

const TOOL_ADD: &str = r#"{"file":"MEMORY.md","entry":"- deploys go through scripts/deploy"}"#;
const TOOL_REFUSED: &str = r#"{"file":"NOTES.md","entry":"x"}"#;

/// The Python package against Hermes Agent: the key both time the operation under (the
/// package's row is the one `ROW_KEYS` names so, Hermes's is `hermes.py`'s), the row's
/// label, and the target: the package at most that many times Hermes's median.
const HERMES_TARGETS: [(&str, &str, f64); 2] = [
    ("read", "`read` MEMORY.md (1.4 KB)", 4.0),
    ("tool", "tool add (durable)", 1.3),
];

/// One operation measured on every setup that has it.
struct Row {
    op: &'static str,
    floor: Samples,
    /// The floor's writes with the component's lock file protocol added.
    locked_floor: Option<Samples>,
    library: Samples,
    fresh: Samples,
    reference: Option<Samples>,
    /// The Python and Node packages, when `scripts/bench` installed them.
    python: Option<Samples>,
    node: Option<Samples>,
}

/// The keys the Python, Node and reference scripts time each row under, in row order.
const ROW_KEYS: [&str; 7] = [
    "read",
    "assemble",
    "add",
    "replace",
    "consolidate",
    "tool",
    "refused",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(300);
    let cli = args.next().expect("usage: bench CALLS CLI [STORE_PY]");
    let reference = args.next();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();

    let started = std::time::Instant::now();
    let source = metis_memory::component_source().unwrap();
    let load = started.elapsed();

    let floor_ws = root.join("floor");
    let floor = Floor::new(&floor_ws.join(".metis"));
    let lib_root = root.join("library");
    std::fs::create_dir_all(&lib_root).unwrap();
    let ws = Workspace::open(&lib_root);
    let fresh_root = root.join("fresh");
    std::fs::create_dir_all(&fresh_root).unwrap();
    let fresh = || Workspace::open(&fresh_root);
    floor
        .write(
            M,
            Edit::Consolidate {
                content: &base_content(),
            },
        )
        .unwrap();
    floor
        .write(
            MemoryFile::User,
            Edit::Consolidate {
                content: "- prefers tea\n",
            },
        )
        .unwrap();
    for w in [&ws, &fresh()] {
        w.consolidate(M, &base_content()).unwrap();
        w.consolidate(MemoryFile::User, "- prefers tea\n").unwrap();
    }
    let base = base_content();
    let floor_reset = |_| {
        floor
            .write(M, Edit::Consolidate { content: &base })
            .unwrap();
    };
    let lib_reset = |_| {
        ws.consolidate(M, &base).unwrap();
    };
    let fresh_reset = |_| {
        fresh().consolidate(M, &base).unwrap();
    };
    let none = |_| {};
    let n = calls;
    let w = 20;

    let mut rows = Vec::new();
    rows.push(Row {
        op: "read MEMORY.md (1.4 KB)",
        floor: Samples::take(w, n, |_| drop(floor.read(M)), none),
        locked_floor: None,
        library: Samples::take(w, n, |_| drop(ws.read(M).unwrap()), none),
        fresh: Samples::take(w, n, |_| drop(fresh().read(M).unwrap()), none),
        reference: None,
        python: None,
        node: None,
    });
    rows.push(Row {
        op: "assemble-system-prompt",
        floor: Samples::take(w, n, |_| drop(floor.assemble(BASE_PROMPT)), none),
        locked_floor: None,
        library: Samples::take(
            w,
            n,
            |_| drop(ws.assemble_system_prompt(BASE_PROMPT).unwrap()),
            none,
        ),
        fresh: Samples::take(
            w,
            n,
            |_| drop(fresh().assemble_system_prompt(BASE_PROMPT).unwrap()),
            none,
        ),
        reference: None,
        python: None,
        node: None,
    });
    let alternate = |i: u32| {
        if i.is_multiple_of(2) {
            format!("{base}- x\n")
        } else {
            base.clone()
        }
    };
    let locked = Floor::with_lock(&root.join("locked-floor").join(".metis"));
    locked
        .write(M, Edit::Consolidate { content: &base })
        .unwrap();
    let locked_reset = |_| {
        locked
            .write(M, Edit::Consolidate { content: &base })
            .unwrap();
    };
    // The durable writes' ratios are read off calls made in turn, one by one (the floor,
    // the floor with the lock, the library): a disk's sync latency drifts over a run, and
    // blocks timed a minute apart would compare the drift, not the writes.
    let add = Edit::Add {
        entry: "- one more fact",
    };
    let replace = |i| {
        let (old, new) = replace_args(i);
        Edit::Replace { old, new }
    };
    let [add_floor, add_locked, add_library] = Samples::interleaved(
        w,
        n,
        [
            (&|_| drop(floor.write(M, add).unwrap()), &floor_reset),
            (&|_| drop(locked.write(M, add).unwrap()), &locked_reset),
            (
                &|_| drop(ws.add_entry(M, "- one more fact").unwrap()),
                &lib_reset,
            ),
        ],
    );
    let [replace_floor, replace_locked, replace_library] = Samples::interleaved(
        w,
        n,
        [
            (&|i| drop(floor.write(M, replace(i)).unwrap()), &none),
            (&|i| drop(locked.write(M, replace(i)).unwrap()), &none),
            (
                &|i| {
                    let (old, new) = replace_args(i);
                    drop(ws.replace(M, old, new).unwrap())
                },
                &none,
            ),
        ],
    );
    let consolidate = |floor: &Floor, i| {
        let content = alternate(i);
        drop(
            floor
                .write(M, Edit::Consolidate { content: &content })
                .unwrap(),
        )
    };
    let [consolidate_floor, consolidate_locked, consolidate_library] = Samples::interleaved(
        w,
        n,
        [
            (&|i| consolidate(&floor, i), &none),
            (&|i| consolidate(&locked, i), &none),
            (&|i| drop(ws.consolidate(M, &alternate(i)).unwrap()), &none),
        ],
    );
    rows.push(Row {
        op: "add-entry (durable)",
        floor: add_floor,
        locked_floor: Some(add_locked),
        library: add_library,
        fresh: Samples::take(
            w,
            n,
            |_| drop(fresh().add_entry(M, "- one more fact").unwrap()),
            fresh_reset,
        ),
        reference: None,
        python: None,
        node: None,
    });
    rows.push(Row {
        op: "replace (durable)",
        floor: replace_floor,
        locked_floor: Some(replace_locked),
        library: replace_library,
        fresh: Samples::take(
            w,
            n,
            |i| {
                let (old, new) = replace_args(i);
                fresh().replace(M, old, new).unwrap();
            },
            none,
        ),
        reference: None,
        python: None,
        node: None,
    });
    rows.push(Row {
        op: "consolidate (durable)",
        floor: consolidate_floor,
        locked_floor: Some(consolidate_locked),
        library: consolidate_library,
        fresh: Samples::take(
            w,
            n,
            |i| drop(fresh().consolidate(M, &alternate(i)).unwrap()),
            none,
        ),
        reference: None,
        python: None,
        node: None,
    });
    rows.push(Row {
        op: "tool call memory_add (+ scan)",
        floor: Samples::take(
            w,
            n,
            |_| drop(floor.tool_call("memory_add", TOOL_ADD).unwrap()),
            floor_reset,
        ),
        locked_floor: None,
        library: Samples::take(
            w,
            n,
            |_| drop(ws.call_tool("memory_add", TOOL_ADD).unwrap()),
            lib_reset,
        ),
        fresh: Samples::take(
            w,
            n,
            |_| drop(fresh().call_tool("memory_add", TOOL_ADD).unwrap()),
            fresh_reset,
        ),
        reference: None,
        python: None,
        node: None,
    });
    rows.push(Row {
        op: "refused tool call (invalid input)",
        floor: Samples::take(
            w,
            n,
            |_| drop(floor.tool_call("memory_add", TOOL_REFUSED).unwrap_err()),
            none,
        ),
        locked_floor: None,
        library: Samples::take(
            w,
            n,
            |_| drop(ws.call_tool("memory_add", TOOL_REFUSED).unwrap_err()),
            none,
        ),
        fresh: Samples::take(
            w,
            n,
            |_| drop(fresh().call_tool("memory_add", TOOL_REFUSED).unwrap_err()),
            none,
        ),
        reference: None,
        python: None,
        node: None,
    });
    let instantiation = Samples::take(
        w,
        n,
        |_| {
            fresh().soft_cap(M).unwrap();
        },
        none,
    );

    let reference_store = reference.as_deref().map(Path::new);
    if let Some(store_py) = reference_store {
        let times = processes::reference_in_process(store_py, &root.join("reference"), n);
        for (row, key) in rows.iter_mut().zip(ROW_KEYS) {
            row.reference = times.get(key).cloned();
        }
    }
    // `scripts/bench` installs the wheel and the npm tarball and names them here.
    if let Some(python) = std::env::var_os("METIS_BENCH_PYTHON") {
        let times = processes::python_package(Path::new(&python), &root.join("python"), n);
        for (row, key) in rows.iter_mut().zip(ROW_KEYS) {
            row.python = times.get(key).cloned();
        }
    }
    if let Some(package) = std::env::var_os("METIS_BENCH_NODE_PACKAGE") {
        let times = processes::node_package(Path::new(&package), &root.join("node"), n);
        for (row, key) in rows.iter_mut().zip(ROW_KEYS) {
            row.node = times.get(key).cloned();
        }
    }
    // Hermes Agent, installed by `scripts/bench` beside the wheel: its interpreter.
    let hermes = std::env::var_os("METIS_BENCH_HERMES")
        .map(|python| processes::hermes(Path::new(&python), &root.join("hermes"), n));
    let procs = processes::measure(Path::new(&cli), reference_store, &lib_root, root);

    print_report(
        &rows,
        &instantiation,
        &procs,
        hermes.as_ref(),
        &source,
        load,
        calls,
        root,
    );
}

fn machine(root: &Path) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let fs_type = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(root)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!(
        "{cpu}, {cores} cores, Linux {}; workspaces on {fs_type} ({})",
        kernel.trim(),
        root.parent().unwrap_or(root).display()
    )
}

/// `met`, or by how much a time misses its target.
fn met_within(time: Duration, target: Duration) -> String {
    if time <= target {
        "met".into()
    } else {
        format!("**not met** by {}", stats::show_duration(time - target))
    }
}

/// `met`, or by how many times a figure misses its target.
fn met_by(ratio: f64, target: f64) -> String {
    let over = ratio / target;
    if ratio <= target {
        "met".into()
    } else if over < 1.1 {
        format!("**not met** by {:.1}%", (over - 1.0) * 100.0)
    } else {
        format!("**not met** by {over:.2}×")
    }
}

/// For each of `HERMES_TARGETS`: its label, the Python package's samples, Hermes's, and
/// the target.
fn hermes_pairs<'a>(
    rows: &'a [Row],
    hermes: Option<&'a HashMap<String, Samples>>,
) -> Vec<(&'static str, Option<&'a Samples>, Option<&'a Samples>, f64)> {
    HERMES_TARGETS
        .iter()
        .map(|&(key, label, target)| {
            let ours = ROW_KEYS
                .iter()
                .position(|&row| row == key)
                .and_then(|row| rows[row].python.as_ref());
            (label, ours, hermes.and_then(|h| h.get(key)), target)
        })
        .collect()
}

fn within(ok: bool) -> &'static str {
    if ok { "within" } else { "**over**" }
}

#[allow(clippy::too_many_arguments)]
fn print_report(
    rows: &[Row],
    instantiation: &Samples,
    procs: &processes::Processes,
    hermes: Option<&HashMap<String, Samples>>,
    source: &metis_memory::ComponentSource,
    load: Duration,
    calls: u32,
    root: &Path,
) {
    println!("# Benchmarks\n");
    println!(
        "Written by `scripts/bench` (release build); do not edit by hand. Machine: {}.",
        machine(root)
    );
    println!(
        "Durability: every write of the floor and of the component syncs the temporary file, renames it over the file and syncs the directory; the reference writes the file in place and syncs nothing."
    );
    println!(
        "Each figure: median (10th–90th percentile) of {calls} calls after 20 untimed ones; processes: {} runs each.",
        processes::RUNS
    );
    println!(
        "Component: {} bytes; this process loaded it in {} ({source:?}).\n",
        metis_memory::COMPONENT_WASM.len(),
        stats::show_duration(load)
    );

    print_summary(rows, procs);

    println!("## Per call\n");
    println!(
        "- **floor**: the core's decisions compiled natively, `std::fs` doing the same checked read and durable atomic write (no sandbox, no lock between processes)."
    );
    println!(
        "- **library**: `metis_memory::Workspace` as an agent host uses it: reads on the instance it keeps, writes on a fresh instance."
    );
    println!(
        "- **fresh instance**: a new `Workspace` for every call, so every call instantiates the component."
    );
    println!(
        "- **reference**: `store.py` of PyPI `metis-llm` 0.1.0, in one Python process (not durable: no sync, no temporary file).\n"
    );
    println!(
        "| operation | floor | floor + lock file | library | library / floor | library / (floor + lock) | fresh instance | reference | library / reference |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in rows {
        let (reference, vs) = match &row.reference {
            Some(r) => (r.show(), format!("{:.2}×", ratio(&row.library, r))),
            None => ("–".into(), "–".into()),
        };
        let (locked, vs_locked) = match &row.locked_floor {
            Some(l) => (l.show(), format!("{:.2}×", ratio(&row.library, l))),
            None => ("–".into(), "–".into()),
        };
        println!(
            "| {} | {} | {} | {} | {:.2}× | {} | {} | {} | {} |",
            row.op,
            row.floor.show(),
            locked,
            row.library.show(),
            ratio(&row.library, &row.floor),
            vs_locked,
            row.fresh.show(),
            reference,
            vs
        );
    }
    println!(
        "\nInstantiation alone (a fresh instance and a `soft-cap` call): {}.\n",
        instantiation.show()
    );

    println!("## Python and Node\n");
    println!(
        "The same calls through the Python package (wasmtime-py, the newest the wheel allows, from the wheel) and the Node package (jco, from the npm tarball), each in one process and used as the Rust library is: reads on the instance a workspace keeps, writes on a fresh one; `–` where `scripts/bench` could not install them.\n"
    );
    println!(
        "| operation | Rust library | Python package | Node package | Python / Rust | Node / Rust |"
    );
    println!("|---|---|---|---|---|---|");
    for row in rows {
        let other = |s: &Option<Samples>| match s {
            Some(s) => (s.show(), format!("{:.2}×", ratio(s, &row.library))),
            None => ("–".into(), "–".into()),
        };
        let ((python, python_vs), (node, node_vs)) = (other(&row.python), other(&row.node));
        println!(
            "| {} | {} | {python} | {node} | {python_vs} | {node_vs} |",
            row.op,
            row.library.show()
        );
    }
    println!();

    println!("## Python package vs Hermes Agent\n");
    println!(
        "Hermes Agent's memory (`tools/memory_tool.py` of PyPI `hermes-agent` 0.19, without its dependencies but PyYAML) timed as the Python package is, in a Python process of its own (`hermes.py`), its MEMORY.md holding the same 1.4 KB; `–` where `scripts/bench` could not install it.\n"
    );
    println!(
        "- **read**: Hermes's read of the file (`MemoryStore._read_file`: read and split into entries, no lock), which its agent does at session start and before every write (no Hermes tool reads memory); the package's `read`, on the instance a workspace keeps."
    );
    println!(
        "- **tool add**: a `memory` tool call adding an entry as Hermes's agent makes it (the JSON arguments parsed, then `memory_tool`: the write gate's config check, the threat scan, an exclusive `flock` on `MEMORY.md.lock`, the file read again, a temporary file written and synced, renamed over the file, the directory never synced); the package's `memory_add` tool call, whose write also syncs the directory.\n"
    );
    println!("| operation | Python package | Hermes Agent | Python / Hermes | target | |");
    println!("|---|---|---|---|---|---|");
    for (label, ours, theirs, target) in hermes_pairs(rows, hermes) {
        let (vs, verdict) = match (ours, theirs) {
            (Some(o), Some(h)) => {
                let r = ratio(o, h);
                (format!("{r:.2}×"), met_by(r, target))
            }
            _ => ("–".into(), "–".into()),
        };
        println!(
            "| {label} | {} | {} | {vs} | ≤ {target}× | {verdict} |",
            ours.map_or("–".into(), Samples::show),
            theirs.map_or("–".into(), Samples::show)
        );
    }
    println!();

    println!("## Processes\n");
    println!(
        "A whole `metis-memory` process, as a hook or a script runs it: cold is the first process after a build (the compiled-component cache is empty, so it compiles), warm every one after.\n"
    );
    println!("| command | cold | warm |");
    println!("|---|---|---|");
    for p in &procs.rows {
        println!(
            "| `{}` | {} | {} |",
            p.command,
            p.cold.as_ref().map_or("–".into(), Samples::show),
            p.warm.show()
        );
    }

    println!("\n## Targets\n");
    println!("| target | figure | |");
    println!("|---|---|---|");
    let by_op = |prefix: &str| rows.iter().find(|r| r.op.starts_with(prefix)).unwrap();
    let warm = |command: &str| {
        procs
            .rows
            .iter()
            .find(|p| p.command.starts_with(command))
            .map(|p| p.warm.median())
    };
    for (command, target) in [("metis-memory read", 4), ("metis-memory prompt", 10)] {
        if let Some(t) = warm(command) {
            println!(
                "| a warm `{command}` process ≤ {target} ms | {} | {} |",
                stats::show_duration(t),
                met_within(t, Duration::from_millis(target))
            );
        }
    }
    for op in ["read", "assemble"] {
        let r = ratio(&by_op(op).library, &by_op(op).floor);
        println!(
            "| library `{op}` ≤ 2× the floor | {r:.2}× | {} |",
            met_by(r, 2.0)
        );
    }
    // A write is held to the floor that takes the same lock between processes: the lock
    // is part of the contract, so the floor without it is shown only for scale.
    for op in ["add-entry", "replace", "consolidate"] {
        let row = by_op(op);
        let bare = ratio(&row.library, &row.floor);
        let Some(locked) = row.locked_floor.as_ref().map(|l| ratio(&row.library, l)) else {
            continue;
        };
        println!(
            "| a durable `{op}` ≤ 1.5× the floor with the same lock file | {locked:.2}× ({bare:.2}× the floor without it) | {} |",
            met_by(locked, 1.5)
        );
    }
    for (label, ours, theirs, target) in hermes_pairs(rows, hermes) {
        if let (Some(o), Some(h)) = (ours, theirs) {
            let r = ratio(o, h);
            println!(
                "| the Python package's {label} ≤ {target}× Hermes Agent's | {r:.2}× | {} |",
                met_by(r, target)
            );
        }
    }
    let i = instantiation.median();
    println!(
        "| a fresh instance ≤ 50 µs | {} | {} |",
        stats::show_duration(i),
        met_within(i, Duration::from_micros(50))
    );
    let size = metis_memory::COMPONENT_WASM.len();
    for (target, when) in [
        (size::RELEASE_TARGET, "this release"),
        (size::TARGET, "where the budgets head"),
    ] {
        let verdict = match size <= target {
            true => "met".to_owned(),
            false => format!("**not met** by {} bytes", size - target),
        };
        println!(
            "| the component ≤ {} KB ({when}) | {size} bytes | {verdict} |",
            target / 1000,
        );
    }

    println!("\n## The component's size\n");
    println!("| part | bytes | budget | |");
    println!("|---|---|---|---|");
    for (part, bytes, budget) in size::parts(metis_memory::COMPONENT_WASM) {
        println!(
            "| {part} | {bytes} | {budget} | {} |",
            within(bytes <= budget)
        );
    }
    println!(
        "| total | {size} | {} | {} |",
        size::TOTAL_BUDGET,
        within(size <= size::TOTAL_BUDGET)
    );
}

/// The start and end of the summary table, which `scripts/bench` copies into the README
/// (and `cli/tests/readme.rs` checks is the same there).
pub const SUMMARY_BEGIN: &str = "<!-- bench-summary:begin -->";
pub const SUMMARY_END: &str = "<!-- bench-summary:end -->";

/// The few figures a reader of the README wants, medians only, between the markers.
fn print_summary(rows: &[Row], procs: &processes::Processes) {
    let median = |s: &Samples| stats::show_duration(s.median());
    let cell = |s: &Option<Samples>| s.as_ref().map_or("–".into(), median);
    println!("## Summary\n");
    println!("{SUMMARY_BEGIN}");
    println!(
        "| median | Rust library | Python package | Node package | native floor | reference (`metis-llm` 0.1.0) |"
    );
    println!("|---|---|---|---|---|---|");
    for (row, label) in rows.iter().zip([
        "`read` MEMORY.md (1.4 KB)",
        "`assemble-system-prompt`",
        "durable `add-entry` (file and directory synced)",
    ]) {
        let reference = match &row.reference {
            Some(r) if row.op.contains("durable") => format!("{}, not durable", median(r)),
            other => cell(other),
        };
        println!(
            "| {label} | {} | {} | {} | {} | {reference} |",
            median(&row.library),
            cell(&row.python),
            cell(&row.node),
            median(&row.floor),
        );
    }
    let process = |prefix: &str| procs.rows.iter().find(|p| p.command.starts_with(prefix));
    if let Some(read) = process("metis-memory read") {
        let reference = process("python3").map_or("–".into(), |p| median(&p.warm));
        println!(
            "| a whole `metis-memory read` process, warm | {} | | | | {reference} (`python3`) |",
            median(&read.warm)
        );
        if let Some(cold) = &read.cold {
            println!(
                "| the first process after a build (compiles once) | {} | | | | |",
                median(cold)
            );
        }
    }
    println!("{SUMMARY_END}\n");
}
