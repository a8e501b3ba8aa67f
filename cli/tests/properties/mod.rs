//! Spec §10.2: random operation sequences and random tool calls against the component,
//! checked step by step against a model written from CONTRACT.md alone (nothing here calls
//! or restates `core/`: the strip set is listed code point by code point, occurrences are
//! counted by the model's own scan, UTF-8 is checked by the model's own validator).
//!
//! The generators produce *intentions* ("an entry that brings MEMORY.md to its hard cap
//! plus one byte, in 3-byte characters", "a replace source taken from the file", "invalid
//! UTF-8 after 2046 bytes") that are resolved against the model's state when the step
//! runs, so the interesting cases come up in every run rather than by chance. Each
//! property prints one line of figures and fails if its generator stops reaching them.

mod generate;
mod model;
mod scanned;
mod store_ops;
mod tool_calls;

use std::cell::RefCell;

use metis_memory::{CallOptions, Error, MemoryFile, ScanPolicy, ToolSuccess, Workspace};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::json;

use crate::common::TestWorkspace;
use generate::BAD_SEQUENCES;
use model::first_invalid_byte;
use scanned::{
    CHARACTERS_ONLY, CORPUS, INJECTION_ONLY, ScanFigures, policy, policy_name, runs_rule,
    scan_case, scan_rule, scan_step,
};
use store_ops::{StoreFigures, step, store_case};
use tool_calls::{SHAPES, ToolFigures, tool_case, tool_step};

/// A tool call as the model of these properties makes it: held to nothing (the WIT's
/// `call-with-options`), since the model knows what every file holds and consolidates
/// unconditionally, as the reference does.
pub(crate) fn call_unheld(
    ws: &Workspace,
    name: &str,
    input: &str,
    scan: ScanPolicy,
) -> Result<ToolSuccess, Error> {
    ws.call_tool_with_options(name, input, &CallOptions::unheld(scan))
        .and_then(|called| called.result())
}

// ---------------------------------------------------------------------------------------
// The runner and the figures.

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

/// Runs `property` on `cases()` random inputs, shrinking any failure.
fn check<S: Strategy>(
    name: &str,
    strategy: S,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let config = ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    TestRunner::new(config)
        .run(&strategy, property)
        .unwrap_or_else(|failure| panic!("{name}: {failure}"));
}

/// Below this many cases the figures are too noisy to assert proportions on.
const MIN_CASES_FOR_FIGURES: u32 = 96;

fn percent(part: u64, whole: u64) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

/// Asserts each `(what, holds)`, unless the run is too short to say.
fn assert_figures(name: &str, line: &str, checks: &[(&str, bool)]) {
    eprintln!("{line}");
    if cases() < MIN_CASES_FOR_FIGURES {
        eprintln!("{name}: fewer than {MIN_CASES_FOR_FIGURES} cases, figures not checked");
        return;
    }
    let failed: Vec<&str> = checks
        .iter()
        .filter(|(_, holds)| !holds)
        .map(|(what, _)| *what)
        .collect();
    assert!(
        failed.is_empty(),
        "{name}: the generator no longer reaches {failed:?} ({line})"
    );
}

// ---------------------------------------------------------------------------------------
// The properties, each with the figures its generator must reach; the cases they run are
// in the modules above.

#[test]
fn component_matches_the_model() {
    let figures = RefCell::new(StoreFigures::default());
    check(
        "store operations",
        prop::collection::vec(step(), 1..24),
        |steps| {
            let mut fig = figures.borrow_mut();
            fig.cases += 1;
            store_case(&TestWorkspace::new(), &steps, &mut fig)
        },
    );
    let f = figures.into_inner();
    let line = format!(
        "store operations: {} cases, {} steps, {} writes ({} written, {:.0}%), cap boundary ±2 B in {} steps / {} cases ({:.0}%): {} writes at a hard cap, {} rejected at +1/+2, {} at a soft cap, {} at +1/+2; {} stripped entries, {} blank entries on a non-UTF-8 file, {} not-unique, {} replaces where counting with overlaps differs; {} plants ({} not UTF-8, {} over the hard cap), {} invalid-utf8 errors, {} consolidates over non-UTF-8; {} reads, {} prompts",
        f.cases,
        f.steps,
        f.writes,
        f.written,
        percent(f.written, f.writes),
        f.boundary_steps,
        f.boundary_cases,
        percent(f.boundary_cases, f.cases),
        f.at_hard,
        f.over_hard,
        f.at_soft,
        f.over_soft,
        f.stripped,
        f.blank_on_invalid,
        f.not_unique,
        f.overlaps,
        f.plants,
        f.invalid_plants,
        f.over_cap_plants,
        f.invalid_refusals,
        f.consolidated_invalid,
        f.reads,
        f.prompts,
    );
    assert_figures(
        "store operations",
        &line,
        &[
            (
                "≥ 40% of writes written",
                percent(f.written, f.writes) >= 40.0,
            ),
            (
                "≥ 30% of cases at a cap boundary",
                percent(f.boundary_cases, f.cases) >= 30.0,
            ),
            ("a write at exactly a hard cap", f.at_hard > 0),
            (
                "a write rejected 1 or 2 bytes over a hard cap",
                f.over_hard > 0,
            ),
            ("a write at exactly a soft cap", f.at_soft > 0),
            ("a write 1 or 2 bytes over a soft cap", f.over_soft > 0),
            ("a stripped entry", f.stripped > 0),
            ("a not-unique replace", f.not_unique > 0),
            ("a replace where overlaps count", f.overlaps > 0),
            ("a blank entry on a non-UTF-8 file", f.blank_on_invalid > 0),
            ("a non-UTF-8 plant", f.invalid_plants > 0),
            ("a plant over the hard cap", f.over_cap_plants > 0),
            ("an invalid-utf8 error", f.invalid_refusals > 0),
            (
                "a consolidate over a non-UTF-8 file",
                f.consolidated_invalid > 0,
            ),
        ],
    );
}

#[test]
fn tool_calls_match_the_model() {
    let figures = RefCell::new(ToolFigures::default());
    check(
        "tool calls",
        prop::collection::vec(tool_step(), 1..20),
        |steps| {
            let mut fig = figures.borrow_mut();
            fig.cases += 1;
            tool_case(&TestWorkspace::new(), &steps, &mut fig)
        },
    );
    let f = figures.into_inner();
    let shapes: Vec<String> = SHAPES
        .iter()
        .zip(f.shapes)
        .skip(1)
        .map(|(shape, n)| format!("{n} {shape}"))
        .collect();
    let line = format!(
        "tool calls: {} cases, {} calls, {} valid ({:.0}%), {} written ({:.0}% of valid), {} refused by the store ({} invalid-utf8); soft-cap hint on add/replace/consolidate {:?}; cap boundary ±2 B in {} calls / {} cases ({:.0}%); {} with \\u escapes; generated violations: {}; {} plants ({} not UTF-8)",
        f.cases,
        f.calls,
        f.valid,
        percent(f.valid, f.calls),
        f.written,
        percent(f.written, f.valid),
        f.store_refusals,
        f.invalid_utf8_refusals,
        f.hints,
        f.boundary_calls,
        f.boundary_cases,
        percent(f.boundary_cases, f.cases),
        f.escaped,
        shapes.join(", "),
        f.plants,
        f.invalid_plants,
    );
    assert_figures(
        "tool calls",
        &line,
        &[
            ("≥ 50% of calls valid", percent(f.valid, f.calls) >= 50.0),
            (
                "≥ 50% of valid calls written",
                percent(f.written, f.valid) >= 50.0,
            ),
            (
                "≥ 30% of cases at a cap boundary",
                percent(f.boundary_cases, f.cases) >= 30.0,
            ),
            (
                "the soft-cap hint on every tool",
                f.hints.iter().all(|&n| n > 0),
            ),
            ("every kind of violation", f.shapes.iter().all(|&n| n > 0)),
            ("escaped characters", f.escaped > 0),
            ("a non-UTF-8 plant", f.invalid_plants > 0),
            ("an invalid-utf8 refusal", f.invalid_utf8_refusals > 0),
        ],
    );
}

/// A case random runs found: a person's hostile text (hidden characters) in USER.md, then a
/// tool's replace whose text forms a phrase where it meets the file's. The refusal blames
/// the phrase the call brings, ahead of the characters the file held before it.
#[test]
fn a_phrase_at_the_seam_is_blamed_on_the_call_before_characters_held_before() {
    use scanned::{Pick, ScanStep};
    let steps = [
        ScanStep::Consolidate(
            MemoryFile::User,
            vec![
                Pick::Benign(2951363391665299659),
                Pick::Benign(2826017540757788303),
            ],
        ),
        ScanStep::Person(MemoryFile::User, 2263981891115315674),
        ScanStep::Replace(
            MemoryFile::User,
            765363131088976962,
            Pick::Benign(13391719645807406896),
        ),
    ];
    let mut fig = ScanFigures::default();
    scan_case(
        &TestWorkspace::new(),
        ScanPolicy::default(),
        &steps,
        &mut fig,
    )
    .unwrap();
}

#[test]
fn scanned_tool_calls_refuse_hostile_text_and_write_the_rest() {
    let figures = RefCell::new(ScanFigures::default());
    check(
        "scanned tool calls",
        (policy(), prop::collection::vec(scan_step(), 1..16)),
        |(policy, steps)| {
            let mut fig = figures.borrow_mut();
            fig.cases += 1;
            scan_case(&TestWorkspace::new(), policy, &steps, &mut fig)
        },
    );
    let f = figures.into_inner();
    for sample in &f.samples {
        eprintln!("  refused by a phrase across entries: {sample}");
    }
    let line = format!(
        "scanned tool calls: {} cases, {} calls (default/injection-only/characters-only {:?}), {} written ({:.0}%, {} over the soft cap), {} refused naming a hostile text's rule (per policy {:?}), {} with a hostile text the policy does not look for written, {} refused by the store first, {} refused by a phrase across benign entries, {} by another rule than the hostile text's; {} hostile texts added by a person",
        f.cases,
        f.calls,
        f.policies,
        f.written,
        percent(f.written, f.calls),
        f.over_soft,
        f.hostile_refused,
        f.refused_by_policy,
        f.let_through,
        f.store_refusals,
        f.phrase,
        f.other_rule,
        f.person,
    );
    assert_figures(
        "scanned tool calls",
        &line,
        &[
            (
                "≥ 30% of calls written",
                percent(f.written, f.calls) >= 30.0,
            ),
            (
                "≥ 10% of calls refused for a hostile text",
                percent(f.hostile_refused, f.calls) >= 10.0,
            ),
            (
                "a hostile refusal under every policy",
                f.refused_by_policy.iter().all(|&n| n > 0),
            ),
            (
                "a hostile text let through by a partial policy",
                f.let_through > 0,
            ),
            ("a write over the soft cap", f.over_soft > 0),
            ("a hostile text added by a person", f.person > 0),
            (
                "≤ 10% of calls refused by a phrase across entries",
                percent(f.phrase + f.other_rule, f.calls) <= 10.0,
            ),
        ],
    );
}

/// Every hostile text alone, under each policy: refused naming its rule exactly when the
/// policy runs the part of the scan its id belongs to, written otherwise.
#[test]
fn each_hostile_text_under_each_policy() {
    let t = TestWorkspace::new();
    let mut refused = 0;
    let mut written = 0;
    let mut by_the_other_part = 0;
    for (id, text) in &CORPUS.hostile {
        for policy in [ScanPolicy::default(), INJECTION_ONLY, CHARACTERS_ONLY] {
            t.put(MemoryFile::User, "kept\n");
            let input = json!({"file": "USER.md", "content": text}).to_string();
            let outcome = call_unheld(&t.ws, "memory_consolidate", &input, policy);
            let context = format!("{id} {text:?} under the {} policy", policy_name(policy));
            if runs_rule(policy, id) {
                match outcome {
                    Err(Error::Tool(error)) => {
                        assert_eq!(
                            scan_rule(&error.message, MemoryFile::User).as_deref(),
                            Some(id.as_str()),
                            "{context}: {}",
                            error.message
                        );
                        assert_eq!(t.bytes(MemoryFile::User).unwrap(), b"kept\n", "{context}");
                        refused += 1;
                    }
                    other => panic!("{context}: {other:?}"),
                }
            } else {
                match outcome {
                    Ok(success) => {
                        assert_eq!(
                            t.bytes(MemoryFile::User).unwrap(),
                            text.as_bytes(),
                            "{context}"
                        );
                        assert_eq!(success.result.after_size_bytes, text.len() as u64);
                        written += 1;
                    }
                    // Hidden characters inside a phrase are dropped before the patterns
                    // match, so a text whose own rule is off may still be refused by a
                    // rule the policy runs (never by one it does not).
                    Err(Error::Tool(error)) => {
                        let rule = scan_rule(&error.message, MemoryFile::User)
                            .unwrap_or_else(|| panic!("{context}: {}", error.message));
                        assert!(runs_rule(policy, &rule), "{context}: {}", error.message);
                        assert_eq!(t.bytes(MemoryFile::User).unwrap(), b"kept\n", "{context}");
                        by_the_other_part += 1;
                    }
                    Err(other) => panic!("{context}: {other}"),
                }
            }
        }
    }
    eprintln!(
        "hostile texts under each policy: {} cases, {refused} refused naming their rule, {written} written by the policy that does not look for them, {by_the_other_part} refused by the part it runs",
        CORPUS.hostile.len()
    );
}

/// The model's UTF-8 validator agrees with the standard library's on random bytes
/// (mostly pieces of UTF-8, so the edges of each sequence are reached).
#[test]
fn the_models_utf8_validator_agrees_with_std() {
    let piece = prop_oneof![
        any::<char>().prop_map(|c| c.to_string().into_bytes()),
        prop::sample::select(BAD_SEQUENCES.to_vec()).prop_map(<[u8]>::to_vec),
        any::<u8>().prop_map(|b| vec![b]),
        (0xC0u8..=0xFF, 0x80u8..=0xBF).prop_map(|(a, b)| vec![a, b]),
    ];
    let count = RefCell::new(0u64);
    check(
        "utf-8 validator",
        prop::collection::vec(piece, 0..12).prop_map(|p| p.concat()),
        |bytes| {
            *count.borrow_mut() += 1;
            let expected = std::str::from_utf8(&bytes).err().map(|e| e.valid_up_to());
            prop_assert_eq!(first_invalid_byte(&bytes), expected, "{:x?}", bytes);
            Ok(())
        },
    );
    eprintln!(
        "utf-8 validator: {} cases, agrees with std",
        count.into_inner()
    );
}
