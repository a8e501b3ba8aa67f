//! The poisoning scan against its corpora (`tests/poisoning/`), natively through
//! `scan::scan` with every check on: every benign text passes, every hostile text is
//! refused by the rule its entry names. `host/tests/poisoning.rs` runs the same corpora
//! through the component's tools.

use metis_memory_core::MemoryFile;
use metis_memory_core::scan::{ScanPolicy, scan};
use serde_json::Value;

fn corpus(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/../tests/poisoning/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    suite["texts"].as_array().unwrap().clone()
}

#[test]
fn every_benign_text_passes() {
    let benign = corpus("benign");
    assert!(benign.len() >= 50);
    let refused: Vec<String> = benign
        .iter()
        .map(|text| text.as_str().unwrap())
        .filter_map(|text| {
            scan(text, ScanPolicy::ALL).map(|f| format!("{text:?}: [{}] {}", f.id, f.detail))
        })
        .collect();
    assert!(refused.is_empty(), "benign texts refused: {refused:#?}");
}

#[test]
fn every_hostile_text_is_refused_by_its_rule() {
    let hostile = corpus("hostile");
    assert!(hostile.len() >= 30);
    let mut missed = Vec::new();
    for case in &hostile {
        let (id, text) = (case["id"].as_str().unwrap(), case["text"].as_str().unwrap());
        match scan(text, ScanPolicy::ALL) {
            Some(finding) if finding.id == id => {
                let message = finding.message(MemoryFile::Memory);
                assert!(
                    message.starts_with(&format!(
                        "MEMORY.md write refused by the memory poisoning scan [{id}]: "
                    )) && message.ends_with("; nothing was written"),
                    "{message}"
                );
                assert!(!finding.detail.is_empty(), "{id} {text:?}: no detail");
            }
            other => missed.push(format!("{id} {text:?}: {other:?}")),
        }
    }
    assert!(missed.is_empty(), "hostile texts not caught: {missed:#?}");
}
