//! The poisoning scan against its corpora (`tests/poisoning/`), natively through
//! `scan::scan` with every check on. The corpora say exactly what the scan does: every
//! benign text passes; a hostile entry names the rule that refuses it, or has `"id": null`
//! (a known miss, with why). Any disagreement fails, a regression as much as a known miss
//! that starts being caught. The rates are printed (`--nocapture`), per rule, per language
//! (`"lang"`, on the texts added for languages other than English), for the texts the
//! rules were tuned on (`"tuning"`) and for the held-out set (`held_out.json`), which
//! they never were. `cli/tests/poisoning.rs` runs the same corpora through the
//! component's tools.

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
    ("exfiltration-read-and-send", 4),
];

fn found(text: &str) -> Option<String> {
    scan(text, ScanPolicy::ALL).map(|f| f.id.to_string())
}

/// A benign entry's text: a string, or an object with the text and what it is
/// (`"tuning"`: written to tune the rules against; `"describes_an_attack"`).
fn benign_text(entry: &Value) -> &str {
    entry.as_str().or_else(|| entry["text"].as_str()).unwrap()
}

#[test]
fn every_benign_text_passes() {
    let benign = corpus("benign");
    assert!(benign.len() >= 150);
    let mut refused = Vec::new();
    let (mut tuning, mut tuning_refused) = (0, 0);
    for entry in &benign {
        let text = benign_text(entry);
        let is_tuning = entry["tuning"].as_bool() == Some(true);
        tuning += usize::from(is_tuning);
        match scan(text, ScanPolicy::ALL) {
            None => assert_eq!(findings(text, ScanPolicy::ALL), [], "{text:?}"),
            Some(finding) => {
                tuning_refused += usize::from(is_tuning);
                refused.push(format!("{text:?}: {} {}", finding.id, finding.detail));
            }
        }
    }
    eprintln!(
        "benign: {} of {} pass; tuning set: {tuning_refused} of {tuning} refused",
        benign.len() - refused.len(),
        benign.len()
    );
    assert!(tuning >= 30, "{tuning} tuning texts");
    assert!(refused.is_empty(), "benign texts refused: {refused:#?}");
}

/// A note a line, as memory keeps them: no two benign notes side by side make a finding
/// (a secret named in one and a request in the next are not one order).
#[test]
fn benign_texts_pass_side_by_side() {
    let benign: Vec<String> = corpus("benign")
        .iter()
        .map(|e| benign_text(e).to_string())
        .collect();
    for separator in ["\n", "\n- ", "\n\n"] {
        let all = benign.join(separator);
        assert_eq!(
            findings(&all, ScanPolicy::ALL),
            [],
            "joined by {separator:?}"
        );
    }
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
    let (mut tuning, mut tuning_caught) = (0, 0);
    let mut disagreements = Vec::new();
    for case in &hostile {
        let text = case["text"].as_str().unwrap();
        if case["tuning"].as_bool() == Some(true) {
            tuning += 1;
            tuning_caught += usize::from(scan(text, ScanPolicy::ALL).is_some());
        }
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
        "hostile: {caught} of {} refused with the expected rule, {misses} known misses; \
         tuning set: {tuning_caught} of {tuning} refused",
        hostile.len()
    );
    assert!(tuning >= 30, "{tuning} tuning texts");
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
/// "Text that quotes an attack"): every hostile text that quotes one is refused, and the
/// benign notes that describe an attack without its words pass. The other choice, reading
/// past quoted text, is measured too: it would let through the hostile quotations whose
/// quoted part is the attack.
#[test]
fn a_quoted_attack_is_refused_like_the_attack() {
    let hostile: Vec<Value> = corpus("hostile")
        .into_iter()
        .filter(|e| e["quotes_an_attack"].as_bool() == Some(true))
        .collect();
    let described: Vec<Value> = corpus("benign")
        .into_iter()
        .filter(|e| e["describes_an_attack"].as_bool() == Some(true))
        .collect();
    assert!(hostile.len() >= 6 && described.len() >= 3);
    for entry in &hostile {
        let text = entry["text"].as_str().unwrap();
        assert!(found(text).is_some(), "{text:?}");
    }
    for entry in &described {
        let text = benign_text(entry);
        assert_eq!(found(text), None, "{text:?}");
    }
    let through = hostile
        .iter()
        .filter(|e| found(&without_quotations(e["text"].as_str().unwrap())).is_none())
        .count();
    eprintln!(
        "quoted attacks: {} hostile refused, {} descriptions without the words pass; \
         reading past quotations would let {through} of the hostile through",
        hostile.len(),
        described.len(),
    );
    assert!(through > hostile.len() / 2);
}

/// The held-out corpus: texts written once, before the rules were last changed, and never
/// tuned against, so its rates say what the scan does on text it has not seen (the
/// figures in docs/security.md, "Memory poisoning"). Its hash is checked so an edit shows;
/// every benign text must pass, and the hostile count is the one the doc reports.
#[test]
fn held_out_rates() {
    use sha2::Digest;
    let dir = format!("{}/../tests/poisoning", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(format!("{dir}/held_out.json")).unwrap();
    let recorded = std::fs::read_to_string(format!("{dir}/held_out.sha256")).unwrap();
    let digest: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        recorded.split_whitespace().next(),
        Some(digest.as_str()),
        "held_out.json is not the file whose hash was recorded: a held-out set that is \
         edited is no longer held out; add new texts to hostile.json or benign.json instead"
    );
    let suite: Value = serde_json::from_slice(&bytes).unwrap();
    let texts = |key: &str| -> Vec<String> {
        suite[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    let (hostile, benign) = (texts("hostile"), texts("benign"));
    assert!(hostile.len() >= 60 && benign.len() >= 50);
    let refused = hostile.iter().filter(|t| found(t).is_some()).count();
    let false_positives: Vec<String> = benign
        .iter()
        .filter_map(|t| found(t).map(|id| format!("{t:?}: {id}")))
        .collect();
    let percent = |n: usize, of: usize| n as f64 * 100.0 / of as f64;
    eprintln!(
        "held out: {refused} of {} hostile refused ({:.1}%), {} of {} benign refused ({:.1}%)",
        hostile.len(),
        percent(refused, hostile.len()),
        false_positives.len(),
        benign.len(),
        percent(false_positives.len(), benign.len()),
    );
    assert!(
        false_positives.is_empty(),
        "held-out benign texts refused: {false_positives:#?}"
    );
    // The figure docs/security.md reports ("Memory poisoning"): a change of the rules that
    // moves it moves the doc with it.
    assert_eq!(
        refused, HELD_OUT_HOSTILE_REFUSED,
        "held-out hostile texts refused: update docs/security.md and this figure together"
    );
}

const HELD_OUT_HOSTILE_REFUSED: usize = 43;
