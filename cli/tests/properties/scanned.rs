//! Scanned tool calls: benign texts, sometimes a hostile one, under the three policies.

use std::sync::LazyLock;

use metis_memory::{Error, MemoryFile, ScanPolicy};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use super::generate::{Aim, Rng, SCAN_SAFE_SPACES, aim, file, filler};
use super::model::{
    Edit, Model, as_refusal, check_success, disk_matches, name, occurrences, refusal_text, strip,
    text_of,
};
use crate::common::TestWorkspace;

pub(crate) struct Corpus {
    benign: Vec<String>,
    /// (rule id, text)
    pub(crate) hostile: Vec<(String, String)>,
}

pub(crate) static CORPUS: LazyLock<Corpus> = LazyLock::new(|| {
    let load = |name: &str| -> Vec<Value> {
        let path = format!(
            "{}/../tests/poisoning/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let suite: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        suite["texts"].as_array().unwrap().clone()
    };
    Corpus {
        // The corpora's known false positives and known misses are left out: the
        // properties need texts whose verdict is certain.
        benign: load("benign")
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        hostile: load("hostile")
            .iter()
            .filter_map(|c| {
                let (id, text) = (c["id"].as_str()?, c["text"].as_str().unwrap());
                Some((id.to_owned(), text.to_owned()))
            })
            .collect(),
    }
});

/// The rules of the scan's invisible-characters part (docs/security.md, "Memory poisoning"); every
/// other rule belongs to its injection-patterns part.
const CHARACTER_RULES: [&str; 8] = [
    "control-character",
    "hidden-carriage-return",
    "hidden-format-character",
    "hidden-tag-character",
    "hidden-variation-selector",
    "hidden-ignorable-character",
    "private-use-character",
    "unassigned-character",
];

/// Whether `text` holds a character of a hostile text that the characters part refuses
/// (anything but printable ASCII and ordinary whitespace, from a text of a character
/// rule): what is left when an edit keeps a piece of such a text.
fn holds_hidden_piece(text: &str) -> bool {
    // A carriage return is ordinary in CRLF only; alone it is what `hidden-carriage-return`
    // refuses.
    let ordinary = |c: char| c.is_ascii_graphic() || matches!(c, ' ' | '\n' | '\t');
    text.chars().filter(|c| !ordinary(*c)).any(|c| {
        CORPUS
            .hostile
            .iter()
            .any(|(id, hostile)| is_character_rule(id) && hostile.contains(c))
    })
}

fn is_character_rule(id: &str) -> bool {
    CHARACTER_RULES.contains(&id)
}

/// Whether `policy` runs the part of the scan that `id` belongs to.
pub(crate) fn runs_rule(policy: ScanPolicy, id: &str) -> bool {
    if is_character_rule(id) {
        policy.invisible_characters
    } else {
        policy.injection_patterns
    }
}

/// The rule a scan refusal names, if `message` is one (docs/security.md, "Memory poisoning").
pub(crate) fn scan_rule(message: &str, file: MemoryFile) -> Option<String> {
    let prefix = format!(
        "{} write refused by the memory poisoning scan [",
        name(file)
    );
    let rest = message.strip_prefix(&prefix)?;
    let end = rest.find(']')?;
    message
        .contains("; nothing was written: ")
        .then(|| rest[..end].to_owned())
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Pick {
    Benign(usize),
    Hostile(usize),
}

impl Pick {
    fn text(self) -> &'static str {
        match self {
            Pick::Benign(i) => &CORPUS.benign[i % CORPUS.benign.len()],
            Pick::Hostile(i) => &CORPUS.hostile[i % CORPUS.hostile.len()].1,
        }
    }
}

fn pick() -> impl Strategy<Value = Pick> {
    prop_oneof![
        3 => any::<usize>().prop_map(Pick::Benign),
        1 => any::<usize>().prop_map(Pick::Hostile),
    ]
}

#[derive(Clone, Debug)]
pub(crate) enum ScanStep {
    Add(MemoryFile, Pick),
    /// Replace one corpus text the file holds (the n-th found) with another.
    Replace(MemoryFile, usize, Pick),
    Consolidate(MemoryFile, Vec<Pick>),
    /// Consolidate to the aimed size: benign texts, then filler.
    Pad(MemoryFile, Aim),
    /// A person adds a hostile text through the store interface, which is not scanned.
    Person(MemoryFile, usize),
}

pub(crate) fn scan_step() -> impl Strategy<Value = ScanStep> {
    prop_oneof![
        5 => (file(), pick()).prop_map(|(f, p)| ScanStep::Add(f, p)),
        2 => (file(), any::<usize>(), pick()).prop_map(|(f, i, p)| ScanStep::Replace(f, i, p)),
        2 => (file(), prop::collection::vec(pick(), 0..4)).prop_map(|(f, p)| ScanStep::Consolidate(f, p)),
        1 => (file(), aim()).prop_map(|(f, a)| ScanStep::Pad(f, a)),
        1 => (file(), any::<usize>()).prop_map(|(f, h)| ScanStep::Person(f, h)),
    ]
}

pub(crate) const INJECTION_ONLY: ScanPolicy = ScanPolicy {
    invisible_characters: false,
    injection_patterns: true,
};

pub(crate) const CHARACTERS_ONLY: ScanPolicy = ScanPolicy {
    invisible_characters: true,
    injection_patterns: false,
};

pub(crate) fn policy() -> impl Strategy<Value = ScanPolicy> {
    prop_oneof![
        2 => Just(ScanPolicy::default()),
        1 => Just(INJECTION_ONLY),
        1 => Just(CHARACTERS_ONLY),
    ]
}

pub(crate) fn policy_name(policy: ScanPolicy) -> &'static str {
    match (policy.invisible_characters, policy.injection_patterns) {
        (true, true) => "default",
        (false, true) => "injection-only",
        (true, false) => "characters-only",
        (false, false) => "off",
    }
}

fn pad_content(aim: Aim, file: MemoryFile) -> String {
    let target = aim.target(file);
    let mut rng = Rng(aim.seed);
    let mut content = String::new();
    loop {
        let text = strip(&CORPUS.benign[rng.below(CORPUS.benign.len())]);
        if content.len() + text.len() + 2 > target {
            break;
        }
        content = content + text + "\n";
    }
    let n = target - content.len();
    content + &filler(&mut rng, n, aim.width, SCAN_SAFE_SPACES)
}

#[derive(Default)]
pub(crate) struct ScanFigures {
    pub(crate) cases: u64,
    pub(crate) calls: u64,
    pub(crate) policies: [u64; 3],
    pub(crate) written: u64,
    pub(crate) hostile_refused: u64,
    pub(crate) refused_by_policy: [u64; 3],
    pub(crate) let_through: u64,
    pub(crate) other_rule: u64,
    pub(crate) phrase: u64,
    pub(crate) store_refusals: u64,
    pub(crate) over_soft: u64,
    pub(crate) person: u64,
    pub(crate) samples: Vec<String>,
}

fn policy_index(policy: ScanPolicy) -> usize {
    match policy_name(policy) {
        "default" => 0,
        "injection-only" => 1,
        _ => 2,
    }
}

pub(crate) fn scan_case(
    t: &TestWorkspace,
    policy: ScanPolicy,
    steps: &[ScanStep],
    fig: &mut ScanFigures,
) -> Result<(), TestCaseError> {
    let mut model = Model::default();
    for step in steps {
        let (file, edit) = match step {
            ScanStep::Add(f, p) => (*f, Edit::Add(p.text().to_owned())),
            ScanStep::Replace(f, n, p) => {
                let text = text_of(model.get(*f)).unwrap_or_default();
                let held: Vec<&str> = CORPUS
                    .benign
                    .iter()
                    .chain(CORPUS.hostile.iter().map(|(_, t)| t))
                    .map(|t| strip(t))
                    .filter(|t| !occurrences(text, t).is_empty())
                    .collect();
                let old = if held.is_empty() {
                    "\u{2603}"
                } else {
                    held[n % held.len()]
                };
                (*f, Edit::Replace(old.to_owned(), p.text().to_owned()))
            }
            ScanStep::Consolidate(f, picks) => {
                let lines: Vec<&str> = picks.iter().map(|p| p.text()).collect();
                (*f, Edit::Consolidate(lines.join("\n")))
            }
            ScanStep::Pad(f, aim) => (*f, Edit::Consolidate(pad_content(*aim, *f))),
            ScanStep::Person(f, h) => {
                let text = &CORPUS.hostile[h % CORPUS.hostile.len()].1;
                let verdict = model.write(*f, &Edit::Add(text.clone()));
                let outcome = t.ws.add_entry(*f, text);
                match (verdict, outcome) {
                    (Ok(after), Ok(_)) => {
                        fig.person += 1;
                        model.set(*f, Some(after));
                    }
                    (Err(expected), Err(Error::Store { error, .. }))
                        if as_refusal(*f, &error) == Some(expected.clone()) => {}
                    (verdict, outcome) => prop_assert!(
                        false,
                        "a person's add: model {:?}, component {:?}",
                        verdict.map(|b| b.len()),
                        outcome
                    ),
                }
                disk_matches(t, &model, "a person's add")?;
                continue;
            }
        };
        let input = match &edit {
            Edit::Add(entry) => ("memory_add", json!({"file": name(file), "entry": entry})),
            Edit::Replace(old, new) => (
                "memory_replace",
                json!({"file": name(file), "old": old, "new": new}),
            ),
            Edit::Consolidate(content) => (
                "memory_consolidate",
                json!({"file": name(file), "content": content}),
            ),
        };
        let described = format!(
            "{edit:?} on {} under the {} policy",
            name(file),
            policy_name(policy)
        );
        fig.calls += 1;
        fig.policies[policy_index(policy)] += 1;
        let snapshot = t.snapshot();
        let before = model.get(file).unwrap_or_default().to_vec();
        let outcome = super::call_unheld(&t.ws, input.0, &input.1.to_string(), policy);
        let after = match model.write(file, &edit) {
            // The store's checks come first: its refusal, whatever the text holds.
            Err(refusal) => {
                fig.store_refusals += 1;
                match outcome {
                    Err(Error::Tool(error)) => {
                        prop_assert_eq!(
                            &error.message,
                            &refusal_text(file, &refusal),
                            "{}",
                            described
                        )
                    }
                    other => prop_assert!(
                        false,
                        "{}: model {:?}, component {:?}",
                        described,
                        refusal,
                        other
                    ),
                }
                prop_assert_eq!(t.snapshot(), snapshot, "{}", described);
                continue;
            }
            Ok(after) => after,
        };
        // The hostile texts the new content holds, and those the policy looks for.
        let text = text_of(Some(&after)).unwrap();
        let present: Vec<&str> = CORPUS
            .hostile
            .iter()
            .filter(|(_, t)| !occurrences(text, strip(t)).is_empty())
            .map(|(id, _)| id.as_str())
            .collect();
        let active: Vec<&str> = present
            .iter()
            .copied()
            .filter(|id| runs_rule(policy, id))
            .collect();
        let characters: Vec<&str> = active
            .iter()
            .copied()
            .filter(|id| is_character_rule(id))
            .collect();
        match outcome {
            Ok(success) => {
                prop_assert!(
                    active.is_empty(),
                    "{}: written although it holds {:?}",
                    described,
                    active
                );
                check_success(file, &edit, &before, &after, &success)?;
                fig.written += 1;
                fig.over_soft += u64::from(success.result.over_soft_cap);
                fig.let_through += u64::from(!present.is_empty());
                model.set(file, Some(after));
            }
            Err(Error::Tool(error)) => {
                prop_assert!(error.is_user_visible);
                prop_assert_eq!(t.snapshot(), snapshot, "{}", described);
                let rule = scan_rule(&error.message, file);
                let Some(rule) = rule else {
                    return Err(TestCaseError::fail(format!(
                        "{described}: {}",
                        error.message
                    )));
                };
                prop_assert!(runs_rule(policy, &rule), "{}: {}", described, error.message);
                // Hidden characters the file held before the call: the refusal is
                // blamed on a finding the call itself brings, when it brings one.
                let held_before = text_of(Some(&before)).unwrap_or_default();
                let all_held = characters.iter().all(|id| {
                    CORPUS.hostile.iter().any(|(hostile_id, hostile)| {
                        hostile_id == id && !occurrences(held_before, strip(hostile)).is_empty()
                    })
                });
                // A finding the call brings: a hostile text of its own, or a phrase its
                // text forms where it meets the file's (the refusal says so).
                let at_the_seam = error
                    .message
                    .contains("where the text this call adds meets");
                let blamed_on_the_call =
                    all_held && (active.contains(&rule.as_str()) || at_the_seam);
                if !characters.is_empty() && !blamed_on_the_call {
                    // The characters part comes first by precedence: one of the hidden
                    // characters present must be what it names.
                    prop_assert!(
                        characters.contains(&rule.as_str()),
                        "{}: {}",
                        described,
                        error.message
                    );
                    fig.hostile_refused += 1;
                    fig.refused_by_policy[policy_index(policy)] += 1;
                } else {
                    // Benign texts hold no hidden characters: only a pattern can be left,
                    // or a hidden character of a hostile text that a replace cut short
                    // (a person's edit put it in; the tool's edit kept a piece of it).
                    prop_assert!(
                        !is_character_rule(&rule) || holds_hidden_piece(text),
                        "{}: {}",
                        described,
                        error.message
                    );
                    if active.contains(&rule.as_str()) {
                        fig.hostile_refused += 1;
                        fig.refused_by_policy[policy_index(policy)] += 1;
                    } else {
                        // A phrase formed across entries (the benign corpus alone passes
                        // text by text): allowed, counted and shown.
                        if active.is_empty() {
                            fig.phrase += 1;
                        } else {
                            fig.other_rule += 1;
                        }
                        if fig.samples.len() < 5 {
                            fig.samples.push(error.message.clone());
                        }
                    }
                }
            }
            other => prop_assert!(false, "{}: {:?}", described, other),
        }
        disk_matches(t, &model, &described)?;
    }
    Ok(())
}
