//! Spec §10.2: random operation sequences against the component, checked step by step
//! against a small model written from CONTRACT.md (independently of `core/`).

mod common;

use common::{TestWorkspace, sha256_hex};
use metis_memory::{Error, MemoryFile};
use proptest::prelude::*;

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

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn component_matches_the_model(ops in prop::collection::vec(op(), 1..24)) {
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
                        Op::Add(..) => prop_assert!(result.after_size_bytes > result.before_size_bytes),
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
        prop_assert!(t.metis_names().iter().all(|n| n == "MEMORY.md" || n == "USER.md"));
    }
}
