//! The poisoning scan against its corpora (`tests/poisoning/`), natively through
//! `scan::scan` with every check on. The corpora say exactly what the scan does: a plain
//! benign string passes; a benign object names the rule that refuses it anyway (a known
//! false positive, with why); a hostile entry names the rule that refuses it, or has
//! `"id": null` (a known miss, with why). Any disagreement fails, a regression as much as
//! a known miss that starts being caught. The rates are printed (`--nocapture`), per rule
//! and per language (`"lang"`, on the texts added for languages other than English).
//! `cli/tests/poisoning.rs` runs the same corpora through the component's tools.

use std::collections::BTreeMap;

use metis_memory_scan::{ScanPolicy, Source, blame, findings, scan};
use serde_json::Value;

fn corpus(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/../tests/poisoning/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    suite["texts"].as_array().unwrap().clone()
}

/// Every rule id, in precedence order, and how many hostile texts each must catch.
const RULES: &[(&str, usize)] = &[
    ("control-character", 2),
    ("hidden-carriage-return", 4),
    ("hidden-format-character", 2),
    ("hidden-variation-selector", 4),
    ("hidden-ignorable-character", 4),
    ("hidden-tag-character", 2),
    ("private-use-character", 2),
    ("unassigned-character", 2),
    ("injection-role-marker", 2),
    ("prompt-section-heading", 4),
    ("exfiltration-markdown-image", 2),
    ("injection-ignore-instructions", 2),
    ("injection-new-instructions", 2),
    ("injection-role-override", 2),
    ("injection-hide-from-user", 2),
    ("injection-reveal-prompt", 2),
    ("injection-precedence-claim", 2),
    ("exfiltration-send-secrets", 2),
    ("injection-disregard-rules", 4),
    ("injection-bypass-safety", 4),
    ("injection-new-system-prompt", 4),
    ("exfiltration-shell-command", 4),
    ("credential-file-access", 4),
    ("persistence-authorized-keys", 4),
    ("persistence-scheduled-task", 4),
    ("persistence-shell-startup", 4),
    ("destructive-command", 4),
];

fn found(text: &str) -> Option<String> {
    scan(text, ScanPolicy::ALL).map(|f| f.id.to_string())
}

#[test]
fn benign_texts_pass_except_the_known_false_positives() {
    let benign = corpus("benign");
    assert!(benign.len() >= 150);
    let (mut passed, mut known) = (0, Vec::new());
    let mut disagreements = Vec::new();
    for entry in &benign {
        let (text, expected) = match entry {
            Value::String(text) => (text.as_str(), None),
            object => {
                assert!(object["why"].as_str().is_some_and(|w| !w.is_empty()));
                let id = object["known_false_positive"].as_str().unwrap();
                (object["text"].as_str().unwrap(), Some(id.to_string()))
            }
        };
        let got = found(text);
        if got != expected {
            let detail = scan(text, ScanPolicy::ALL).map(|f| f.detail);
            disagreements.push(format!(
                "{text:?}: expected {expected:?}, got {got:?} {detail:?}"
            ));
        }
        match &got {
            None => {
                passed += 1;
                assert_eq!(findings(text, ScanPolicy::ALL), [], "{text:?}");
            }
            Some(id) => known.push(id.clone()),
        }
    }
    eprintln!(
        "benign: {passed} of {} pass; known false positives: {known:?}",
        benign.len()
    );
    assert!(
        disagreements.is_empty(),
        "benign texts judged otherwise than the corpus says: {disagreements:#?}"
    );
}

/// The languages of the hostile texts that are not English, and the look-alikes: the
/// corpus must hold at least 150 of them (the issue that added them).
const LANGUAGES: &[&str] = &[
    "zh",
    "hi",
    "es",
    "fr",
    "ar",
    "bn",
    "pt",
    "ru",
    "ur",
    "id",
    "de",
    "ja",
    "ko",
    "it",
    "tr",
    "pl",
    "vi",
    "look-alike",
];

#[test]
fn hostile_texts_are_refused_by_their_rule_except_the_known_misses() {
    let hostile = corpus("hostile");
    assert!(hostile.len() >= 120);
    let in_languages = hostile
        .iter()
        .filter(|case| LANGUAGES.contains(&case["lang"].as_str().unwrap_or("en")))
        .count();
    assert!(
        in_languages >= 150,
        "{in_languages} texts in other languages"
    );
    // Caught and total, per language (English: the texts without a language).
    let mut per_language: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut per_rule: BTreeMap<String, usize> = BTreeMap::new();
    let (mut caught, mut misses) = (0, 0);
    let mut disagreements = Vec::new();
    for case in &hostile {
        let text = case["text"].as_str().unwrap();
        let expected = case["id"].as_str().map(str::to_string);
        if expected.is_none() {
            assert!(case["why"].as_str().is_some_and(|w| !w.is_empty()));
        }
        let finding = scan(text, ScanPolicy::ALL);
        let got = finding.as_ref().map(|f| f.id.to_string());
        let language = per_language
            .entry(case["lang"].as_str().unwrap_or("en"))
            .or_default();
        language.0 += usize::from(finding.is_some());
        language.1 += 1;
        if got != expected {
            let detail = finding.as_ref().map(|f| &f.detail);
            disagreements.push(format!(
                "{text:?}: expected {expected:?}, got {got:?} {detail:?}"
            ));
        }
        let Some(finding) = finding else {
            misses += 1;
            continue;
        };
        caught += 1;
        *per_rule.entry(finding.id.to_string()).or_default() += 1;
        // A new file of this text blames the text itself, for the finding `scan` reports.
        let blamed = blame("", text, text, ScanPolicy::ALL).unwrap();
        assert_eq!(blamed.finding, finding, "{text:?}");
        assert_eq!(blamed.source, Source::Added { line: finding.line });
        assert!(!finding.detail.is_empty(), "{text:?}: no detail");
        let all = findings(text, ScanPolicy::ALL);
        assert!(all.iter().any(|f| f.id == finding.id), "{text:?}: {all:?}");
    }
    eprintln!(
        "hostile: {caught} of {} refused with the expected rule, {misses} known misses",
        hostile.len()
    );
    for (id, _) in RULES {
        eprintln!("  {id}: {}", per_rule.get(*id).copied().unwrap_or(0));
    }
    for (language, (caught, total)) in &per_language {
        eprintln!("  [{language}] {caught} of {total} refused");
    }
    assert!(
        disagreements.is_empty(),
        "hostile texts judged otherwise than the corpus says: {disagreements:#?}"
    );
    for (id, least) in RULES {
        let n = per_rule.get(*id).copied().unwrap_or(0);
        assert!(
            n >= *least,
            "{id}: {n} hostile texts, want at least {least}"
        );
    }
    let unknown: Vec<&String> = per_rule
        .keys()
        .filter(|id| !RULES.iter().any(|(r, _)| r == id))
        .collect();
    assert!(
        unknown.is_empty(),
        "rules missing from the list: {unknown:?}"
    );
}

/// `text` without what it quotes: the spans between a pair of `"`, `` ` ``, `«` `»`,
/// `“` `”`, `「` `」`, or `'` opening after a space (not an apostrophe).
fn without_quotations(text: &str) -> String {
    let mut out = String::new();
    let mut closing: Option<char> = None;
    let mut previous = ' ';
    for c in text.chars() {
        match closing {
            Some(close) if c == close => closing = None,
            Some(_) => {}
            None => {
                closing = match c {
                    '"' | '`' => Some(c),
                    '«' => Some('»'),
                    '“' => Some('”'),
                    '「' => Some('」'),
                    '\'' if previous.is_whitespace() || previous == '(' => Some('\''),
                    _ => None,
                };
                if closing.is_none() {
                    out.push(c);
                }
            }
        }
        previous = c;
    }
    out
}

/// Notes that quote an attack to describe it are refused like the attack (docs/security.md,
/// "Text that quotes an attack"), both ways measured: every hostile text that quotes one
/// is refused, and the benign ones that do are the known false positives of that choice.
/// The other choice, reading past quoted text, is measured too: it would let through
/// the hostile quotations whose quoted part is the attack.
#[test]
fn a_quoted_attack_is_refused_like_the_attack() {
    let quoting = |entry: &Value| entry["quotes_an_attack"].as_bool() == Some(true);
    let hostile: Vec<Value> = corpus("hostile").into_iter().filter(quoting).collect();
    let benign: Vec<Value> = corpus("benign").into_iter().filter(quoting).collect();
    assert!(hostile.len() >= 6 && !benign.is_empty());
    for entry in &hostile {
        let text = entry["text"].as_str().unwrap();
        assert!(found(text).is_some(), "{text:?}");
    }
    for entry in &benign {
        let text = entry["text"].as_str().unwrap();
        assert_eq!(
            found(text).as_deref(),
            entry["known_false_positive"].as_str(),
            "{text:?}"
        );
    }
    let through = |entries: &[Value]| {
        entries
            .iter()
            .filter(|e| found(&without_quotations(e["text"].as_str().unwrap())).is_none())
            .count()
    };
    let (hostile_through, benign_through) = (through(&hostile), through(&benign));
    eprintln!(
        "quoted attacks: {} hostile refused, {} benign refused (known false positives); \
         reading past quotations would let {hostile_through} of the hostile and \
         {benign_through} of the benign through",
        hostile.len(),
        benign.len()
    );
    assert!(hostile_through > hostile.len() / 2);
}
