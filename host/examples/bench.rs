//! Per-call cost of the embedded component: `cargo run --example bench [ITERATIONS]`
//! (scripts/bench). Every call instantiates a fresh instance, as the library always does.

use std::time::{Duration, Instant};

use metis_memory::{MemoryFile, Workspace};

fn measure(name: &str, iterations: u32, mut call: impl FnMut(u32)) {
    let started = Instant::now();
    for i in 0..iterations {
        call(i);
    }
    let per_call = started.elapsed() / iterations;
    println!("{name:<40} {:>8.1} µs/call", per_call.as_secs_f64() * 1e6);
}

fn main() {
    let iterations: u32 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path());

    let started = Instant::now();
    ws.read(MemoryFile::Memory).unwrap();
    let first: Duration = started.elapsed();
    println!(
        "{:<40} {:>8.1} ms (once per process)",
        "first call (compile the component)",
        first.as_secs_f64() * 1e3
    );

    ws.consolidate(MemoryFile::Memory, &"- a remembered fact\n".repeat(90))
        .unwrap();
    measure("read MEMORY.md (1.8 KB)", iterations, |_| {
        ws.read(MemoryFile::Memory).unwrap();
    });
    measure("assemble-system-prompt", iterations, |_| {
        ws.assemble_system_prompt("You are helpful.").unwrap();
    });
    measure("compose-system-prompt, audit report", iterations, |_| {
        ws.compose_system_prompt("You are helpful.", metis_memory::AuditPolicy::Report)
            .unwrap();
    });
    measure("audit MEMORY.md", iterations, |_| {
        ws.audit(MemoryFile::Memory).unwrap();
    });
    measure(
        "consolidate USER.md (lock, fsync, rename)",
        iterations,
        |i| {
            ws.consolidate(MemoryFile::User, &format!("fact {i}\n"))
                .unwrap();
        },
    );
    measure("tool call memory_replace (+ scan)", iterations, |i| {
        let input = format!(
            r#"{{"file":"USER.md","old":"fact {i}","new":"fact {}"}}"#,
            i + 1
        );
        if i == 0 {
            ws.consolidate(MemoryFile::User, "fact 0\n").unwrap();
        }
        ws.call_tool("memory_replace", &input).unwrap();
    });
    measure("rejected tool call (invalid input)", iterations, |_| {
        ws.call_tool("memory_add", r#"{"file":"NOTES.md"}"#)
            .unwrap_err();
    });
}
