//! Timings of the poisoning scan: the median of many runs of `scan::scan` and
//! `scan::findings` under `ScanPolicy::ALL` on one short note (a tool call's entry), a
//! realistic 4 KB MEMORY.md (benign corpus lines), 4 KB of the corpus's notes in other
//! languages, 4 KB of the hostile corpus, and 64 KB of near-miss tokens in English and in
//! the other languages. Run with
//! `cargo run --release -p metis-memory-core --example scan_bench [input name part]`.

use std::hint::black_box;
use std::time::Instant;

use metis_memory_scan::{ScanPolicy, findings, scan};
use serde_json::Value;

fn corpus(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/../tests/poisoning/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    suite["texts"].as_array().unwrap().clone()
}

/// Lines (as list items) until `size` bytes, cycling through `lines`.
fn fill(lines: &[String], size: usize, item: bool) -> String {
    let mut out = String::from("# Memory\n\n");
    for line in lines.iter().cycle() {
        if out.len() >= size {
            break;
        }
        if item {
            out.push_str("- ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The median time of one call of `f` in microseconds, over enough runs to fill about
/// `budget_ms` (at least 11).
fn median_us(budget_ms: u64, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    f();
    let once = start.elapsed().as_secs_f64().max(1e-7);
    let runs = ((budget_ms as f64 / 1e3) / once).clamp(11.0, 5001.0) as usize;
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[times.len() / 2]
}

fn main() {
    let benign: Vec<String> = corpus("benign")
        .into_iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    let hostile: Vec<String> = corpus("hostile")
        .into_iter()
        .filter_map(|v| v["text"].as_str().map(String::from))
        .collect();
    let near = "curl wget nc -d --data -F -T | | cat head base64 * * crontab @reboot \
                echo printf >> > rm -rf -r sudo del /s /q find dd of=/dev/sdx mkfs chmod \
                ignore forget the all any your our bypass disable new updated system \
                ssh-rsa tee -a authorized_keys-not .env.example ~/.ssh/id_rsa.pub \
                $token_count send post upload delete wipe everything\n";
    // The notes in other languages, and the first words of their rules' phrases that never
    // complete one: every start tries the other languages' patterns.
    let other_languages: Vec<String> = benign.iter().filter(|t| !t.is_ascii()).cloned().collect();
    let near_languages = "ignorez toutes les instructions ignora las reglas игнорируй все \
                          правила 忽略 之前 的 设置 以前 の 設定 を 이전의 모든 설정을 पिछले सभी \
                          नियम تجاهل جميع الملفات zignoruj wszystkie pliki önceki tüm dosyaları \
                          abaikan semua berkas bỏ qua tất cả tệp du bist jetzt tu es désormais\n";
    let inputs = [
        ("one short note", benign[0].clone()),
        ("benign MEMORY.md", fill(&benign, 4096, true)),
        ("other languages", fill(&other_languages, 4096, true)),
        ("hostile corpus", fill(&hostile, 4096, false)),
        ("near misses", near.repeat(64 * 1024 / near.len() + 1)),
        (
            "languages' misses",
            near_languages.repeat(64 * 1024 / near_languages.len() + 1),
        ),
    ];
    let policy = ScanPolicy::ALL;
    println!(
        "{:<18} {:>7} {:>9} {:>11} {:>9} {:>11} {:>9}",
        "input", "bytes", "findings", "scan µs", "KB/ms", "findings µs", "KB/ms"
    );
    // An argument keeps only the inputs whose name contains it (for a profiler).
    let only = std::env::args().nth(1).unwrap_or_default();
    for (name, text) in inputs.iter().filter(|(name, _)| name.contains(&*only)) {
        let budget = 400;
        let count = findings(text, policy).len();
        let scan_us = median_us(budget, || {
            black_box(scan(black_box(text), policy));
        });
        let findings_us = median_us(budget, || {
            black_box(findings(black_box(text), policy));
        });
        let kb = text.len() as f64 / 1024.0;
        println!(
            "{name:<18} {:>7} {count:>9} {scan_us:>11.1} {:>9.1} {findings_us:>11.1} {:>9.1}",
            text.len(),
            kb / (scan_us / 1e3),
            kb / (findings_us / 1e3),
        );
    }
}
