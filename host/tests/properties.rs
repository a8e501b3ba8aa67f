//! Spec §10.2: random operation sequences against the component, checked step by step
//! against a small model written from CONTRACT.md (independently of `core/`).

mod common;

use common::{TestWorkspace, sha256_hex};
use metis_memory::{Error, MemoryFile, ScanPolicy};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::Value;

#[derive(Clone, Debug)]
enum Op {
    Add(MemoryFile, String),
    Replace(MemoryFile, String, String),
    Consolidate(MemoryFile, String),
}

/// The model's verdict on a write.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Written(Vec<u8>),
    Rejected(&'static str),
}

fn hard_cap(file: MemoryFile) -> usize {
    match file {
        MemoryFile::Memory => 4096,
        MemoryFile::User => 3072,
    }
}

fn soft_cap(file: MemoryFile) -> usize {
    match file {
        MemoryFile::Memory => 2048,
        MemoryFile::User => 1536,
    }
}

/// CONTRACT §3, restated as directly as possible.
fn model(op: &Op, current: &str) -> Verdict {
    let is_space = |c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c);
    let (file, after) = match op {
        Op::Add(file, entry) => {
            let entry = entry.trim_matches(is_space);
            if entry.is_empty() {
                return Verdict::Rejected("empty-entry");
            }
            let mut text = current.to_owned();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            (file, text + entry + "\n")
        }
        Op::Replace(file, old, new) => {
            if current.is_empty() {
                return Verdict::Rejected("nothing-to-replace");
            }
            match current.matches(old.as_str()).count() {
                0 => return Verdict::Rejected("not-found"),
                1 => (file, current.replacen(old.as_str(), new, 1)),
                _ => return Verdict::Rejected("not-unique"),
            }
        }
        Op::Consolidate(file, content) => (file, content.clone()),
    };
    if after.len() > hard_cap(*file) {
        Verdict::Rejected("hard-cap-exceeded")
    } else {
        Verdict::Written(after.into_bytes())
    }
}

fn file() -> impl Strategy<Value = MemoryFile> {
    prop_oneof![Just(MemoryFile::Memory), Just(MemoryFile::User)]
}

/// Short texts over a small alphabet (so replace sources are often found, sometimes
/// repeated) that includes multi-byte characters and the whitespace strip cares about.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "a", "b", "ab", " ", "\n", "\r\n", "\t", "\u{1c}", "\u{1f}", "é", "🦀", "\u{3000}",
        ]),
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

/// Contents around the caps, so both sides of each boundary are exercised.
fn big_text() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["x", "é", "🦀\n"]),
        1400usize..4200,
    )
        .prop_map(|(unit, bytes)| unit.repeat(bytes / unit.len()))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (file(), text()).prop_map(|(f, e)| Op::Add(f, e)),
        1 => (file(), big_text()).prop_map(|(f, e)| Op::Add(f, e)),
        3 => (file(), text(), text()).prop_map(|(f, o, n)| Op::Replace(f, o, n)),
        1 => (file(), text(), big_text()).prop_map(|(f, o, n)| Op::Replace(f, o, n)),
        2 => (file(), text()).prop_map(|(f, c)| Op::Consolidate(f, c)),
        2 => (file(), big_text()).prop_map(|(f, c)| Op::Consolidate(f, c)),
    ]
}

fn op_file(op: &Op) -> MemoryFile {
    match op {
        Op::Add(f, _) | Op::Replace(f, _, _) | Op::Consolidate(f, _) => *f,
    }
}

/// Runs `property` on `PROPTEST_CASES` (default 96) random inputs, shrinking any failure,
/// and reports how many cases and operations ran.
fn check<S: Strategy>(
    name: &str,
    strategy: S,
    property: impl Fn(S::Value) -> Result<usize, TestCaseError>,
) {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let operations = std::cell::Cell::new(0);
    TestRunner::new(config)
        .run(&strategy, |input| {
            operations.set(operations.get() + property(input)?);
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{name}: {failure}"));
    eprintln!(
        "{name}: {cases} cases, {} operations, no divergence",
        operations.get()
    );
}

#[test]
fn component_matches_the_model() {
    check(
        "store operations",
        prop::collection::vec(op(), 1..24),
        |ops| {
            let t = TestWorkspace::new();
            let mut last_after_hash: [Option<String>; 2] = [None, None];
            for op in &ops {
                let file = op_file(op);
                let index = file as usize;
                let before = t.bytes(file).unwrap_or_default();
                let current = String::from_utf8(before.clone()).unwrap();
                let outcome = match op {
                    Op::Add(f, e) => t.ws.add_entry(*f, e),
                    Op::Replace(f, o, n) => t.ws.replace(*f, o, n),
                    Op::Consolidate(f, c) => t.ws.consolidate(*f, c),
                };
                match (model(op, &current), outcome) {
                    (Verdict::Written(expected), Ok(result)) => {
                        let on_disk = t.bytes(file).unwrap();
                        prop_assert_eq!(&on_disk, &expected);
                        prop_assert_eq!(&result.before_hash, &sha256_hex(&before));
                        prop_assert_eq!(&result.after_hash, &sha256_hex(&on_disk));
                        prop_assert_eq!(result.before_size_bytes, before.len() as u64);
                        prop_assert_eq!(result.after_size_bytes, on_disk.len() as u64);
                        prop_assert_eq!(result.over_soft_cap, on_disk.len() > soft_cap(file));
                        prop_assert!(!result.over_hard_cap);
                        // Size is never above the hard cap after a success.
                        prop_assert!(on_disk.len() <= hard_cap(file));
                        // The hash chain: each write starts where the previous one ended.
                        if let Some(previous) = &last_after_hash[index] {
                            prop_assert_eq!(&result.before_hash, previous);
                        }
                        last_after_hash[index] = Some(result.after_hash.clone());
                        match op {
                            // Add never shrinks a file.
                            Op::Add(..) => {
                                prop_assert!(result.after_size_bytes > result.before_size_bytes)
                            }
                            // consolidate(c) twice equals once.
                            Op::Consolidate(f, c) => {
                                let again = t.ws.consolidate(*f, c).unwrap();
                                prop_assert_eq!(&again.before_hash, &again.after_hash);
                                prop_assert_eq!(&again.after_hash, &result.after_hash);
                                prop_assert_eq!(t.bytes(file).unwrap(), on_disk);
                            }
                            Op::Replace(..) => {}
                        }
                    }
                    (Verdict::Rejected(expected), Err(Error::Store { error, .. })) => {
                        prop_assert_eq!(error.kind(), expected);
                        prop_assert_eq!(t.bytes(file).unwrap_or_default(), before);
                    }
                    (verdict, outcome) => {
                        prop_assert!(false, "{op:?}: model {verdict:?}, component {outcome:?}");
                    }
                }
            }
            // No temporary file survives any sequence.
            prop_assert!(
                t.metis_names()
                    .iter()
                    .all(|n| n == "MEMORY.md" || n == "USER.md")
            );
            Ok(ops.len())
        },
    );
}

/// A tool call's input: a JSON object over the tools' property names (sometimes wrong
/// types, sometimes extra or missing properties), another JSON value, or any text.
fn tool_input() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        3 => prop::sample::select(vec!["MEMORY.md", "USER.md", "memory.md", "../USER.md", ""])
            .prop_map(Value::from),
        4 => text().prop_map(Value::from),
        1 => big_text().prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        1 => prop::collection::vec(text().prop_map(Value::from), 0..3).prop_map(Value::from),
    ];
    let keys = prop::sample::subsequence(
        vec!["file", "entry", "old", "new", "content", "extra"],
        0..=6,
    );
    let object = keys.prop_flat_map(move |keys| {
        prop::collection::vec(value.clone(), keys.len()).prop_map(move |values| {
            let map: serde_json::Map<String, Value> =
                keys.iter().map(|k| k.to_string()).zip(values).collect();
            Value::Object(map).to_string()
        })
    });
    prop_oneof![
        8 => object,
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => "\\PC{0,24}",
    ]
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(vec!["memory_add", "memory_replace", "memory_consolidate"])
            .prop_map(str::to_owned),
        1 => "[a-z_]{0,14}",
    ]
}

/// CONTRACT §5's validation, restated: the store operation a valid call makes.
fn model_tool_call(name: &str, input: &str) -> Option<Op> {
    let required: &[&str] = match name {
        "memory_add" => &["file", "entry"],
        "memory_replace" => &["file", "old", "new"],
        "memory_consolidate" => &["file", "content"],
        _ => return None,
    };
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(input) else {
        return None;
    };
    let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
    keys.sort();
    let mut wanted = required.to_vec();
    wanted.sort();
    if keys != wanted {
        return None;
    }
    let text = |k: &str| map[k].as_str().map(str::to_owned);
    let file = match text("file")?.as_str() {
        "MEMORY.md" => MemoryFile::Memory,
        "USER.md" => MemoryFile::User,
        _ => return None,
    };
    Some(match name {
        "memory_add" => Op::Add(file, text("entry").filter(|e| !e.is_empty())?),
        "memory_replace" => Op::Replace(file, text("old")?, text("new")?),
        _ => Op::Consolidate(file, text("content")?),
    })
}

// Random tool JSON, scan off: the component agrees with the model on every call.
#[test]
fn tool_calls_match_the_model() {
    check(
        "tool calls",
        prop::collection::vec((tool_name(), tool_input()), 1..16),
        |calls| {
            let t = TestWorkspace::new();
            t.put(MemoryFile::Memory, "seed a\n");
            let off = ScanPolicy {
                invisible_characters: false,
                injection_patterns: false,
            };
            for (name, input) in &calls {
                let snapshot = t.snapshot();
                let expected = model_tool_call(name, input).map(|op| {
                    let file = op_file(&op);
                    let current = String::from_utf8(t.bytes(file).unwrap_or_default()).unwrap();
                    (file, model(&op, &current))
                });
                let outcome = t.ws.call_tool_with_policy(name, input, off);
                match (expected, outcome) {
                    (Some((file, Verdict::Written(bytes))), Ok(success)) => {
                        prop_assert_eq!(t.bytes(file).unwrap(), bytes);
                        prop_assert_eq!(
                            &success.result.after_hash,
                            &sha256_hex(&t.bytes(file).unwrap())
                        );
                    }
                    (None | Some((_, Verdict::Rejected(_))), Err(Error::Tool(refusal))) => {
                        prop_assert!(refusal.is_user_visible);
                        prop_assert_eq!(t.snapshot(), snapshot);
                    }
                    (expected, outcome) => prop_assert!(
                        false,
                        "{name} {input:?}: model {expected:?}, component {outcome:?}"
                    ),
                }
            }
            Ok(calls.len())
        },
    );
}

// Random tool JSON, scan on: no panic, no trap, and every refusal changes nothing.
#[test]
fn scanned_tool_calls_refuse_without_a_trace() {
    check(
        "scanned tool calls",
        prop::collection::vec((tool_name(), tool_input()), 1..16),
        |calls| {
            let t = TestWorkspace::new();
            for (name, input) in &calls {
                let snapshot = t.snapshot();
                match t.ws.call_tool(name, input) {
                    Ok(_) => {}
                    Err(Error::Tool(_)) => prop_assert_eq!(t.snapshot(), snapshot),
                    Err(other) => prop_assert!(false, "{name} {input:?}: {other:?}"),
                }
            }
            Ok(calls.len())
        },
    );
}
