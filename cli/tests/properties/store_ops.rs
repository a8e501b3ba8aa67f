//! Store operations.

use metis_memory::{Error, MemoryFile};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::generate::{
    EditIntent, EntryIntent, PlantIntent, edit_intent, file, plant, plant_intent, resolve_edit,
    resolve_plant,
};
use super::model::{
    Edit, Model, Refusal, Short, as_refusal, at_boundary, attempted, disk_matches, expected_result,
    first_invalid_byte, hard_cap, name, occurrences, refusal_text, soft_cap, strip, text_of,
};
use crate::common::TestWorkspace;

#[derive(Clone, Debug)]
pub(crate) enum Step {
    Edit(MemoryFile, EditIntent),
    Plant(MemoryFile, PlantIntent),
    Read(MemoryFile),
    Prompt(usize),
}

const BASES: [&str; 6] = [
    "",
    "You are a careful assistant.",
    "  Base with trailing whitespace \n\t\u{1c}\u{3000}\u{85}",
    "\n\nLeading blank lines stay",
    "ends in a zero-width space\u{200b}",
    "\u{2029}",
];

pub(crate) fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => (file(), edit_intent()).prop_map(|(f, e)| Step::Edit(f, e)),
        3 => (file(), plant_intent()).prop_map(|(f, p)| Step::Plant(f, p)),
        2 => file().prop_map(Step::Read),
        1 => (0..BASES.len()).prop_map(Step::Prompt),
    ]
}

#[derive(Default)]
pub(crate) struct StoreFigures {
    pub(crate) cases: u64,
    pub(crate) steps: u64,
    pub(crate) writes: u64,
    pub(crate) written: u64,
    pub(crate) boundary_steps: u64,
    pub(crate) boundary_cases: u64,
    pub(crate) at_hard: u64,
    pub(crate) over_hard: u64,
    pub(crate) at_soft: u64,
    pub(crate) over_soft: u64,
    pub(crate) stripped: u64,
    pub(crate) not_unique: u64,
    pub(crate) overlaps: u64,
    pub(crate) blank_on_invalid: u64,
    pub(crate) plants: u64,
    pub(crate) invalid_plants: u64,
    pub(crate) over_cap_plants: u64,
    pub(crate) invalid_refusals: u64,
    pub(crate) consolidated_invalid: u64,
    pub(crate) reads: u64,
    pub(crate) prompts: u64,
}

pub(crate) fn store_case(
    t: &TestWorkspace,
    steps: &[Step],
    fig: &mut StoreFigures,
) -> Result<(), TestCaseError> {
    let mut model = Model::default();
    // The hash chain: each write starts where the previous one on that file ended, unless
    // something else changed the file in between.
    let mut chain: [Option<String>; 2] = [None, None];
    let mut boundary = false;
    // Each plant is probed at once: a blank entry (add's first check comes before the
    // read) and a read, then the generated steps go on from there.
    // (Probes are not counted among the generated steps and writes.)
    let probed = steps.iter().flat_map(|step| match step {
        Step::Plant(file, _) => vec![
            (step.clone(), false),
            (
                Step::Edit(*file, EditIntent::Add(EntryIntent::Blank { seed: 1 })),
                true,
            ),
            (Step::Read(*file), true),
        ],
        _ => vec![(step.clone(), false)],
    });
    for (step, probe) in &probed.collect::<Vec<_>>() {
        let generated = u64::from(!probe);
        fig.steps += generated;
        let described;
        match step {
            Step::Edit(file, intent) => {
                let file = *file;
                let edit = resolve_edit(intent, file, &model);
                described = format!("{edit:?} on {}", name(file));
                let before = model.get(file).unwrap_or_default().to_vec();
                let verdict = model.write(file, &edit);
                let snapshot = t.snapshot();
                let outcome = match &edit {
                    Edit::Add(e) => t.ws.add_entry(file, e),
                    Edit::Replace(o, n) => t.ws.replace(file, o, n),
                    Edit::Consolidate(c) => t.ws.consolidate(file, c),
                };
                fig.writes += generated;
                match &edit {
                    // Counting with overlaps would say otherwise.
                    Edit::Replace(old, _) if !old.is_empty() => {
                        let text = text_of(model.get(file)).unwrap_or_default();
                        let overlapping = (0..text.len())
                            .filter(|&i| text.as_bytes()[i..].starts_with(old.as_bytes()))
                            .count();
                        fig.overlaps += u64::from(overlapping != occurrences(text, old).len());
                    }
                    // Add's first check decides, before the file is read.
                    Edit::Add(entry) => {
                        fig.blank_on_invalid +=
                            u64::from(strip(entry).is_empty() && text_of(model.get(file)).is_err());
                    }
                    _ => {}
                }
                if let Some(size) = attempted(&verdict) {
                    let (soft, hard) = (soft_cap(file), hard_cap(file));
                    fig.at_hard += u64::from(size == hard && verdict.is_ok());
                    fig.over_hard += u64::from((hard + 1..=hard + 2).contains(&size));
                    fig.at_soft += u64::from(size == soft && verdict.is_ok());
                    fig.over_soft += u64::from((soft + 1..=soft + 2).contains(&size));
                    if at_boundary(file, size) {
                        fig.boundary_steps += 1;
                        boundary = true;
                    }
                }
                match (verdict, outcome) {
                    (Ok(after), Ok(result)) => {
                        fig.written += generated;
                        prop_assert_eq!(
                            &result,
                            &expected_result(file, &before, &after),
                            "{}",
                            described
                        );
                        prop_assert!(after.len() <= hard_cap(file));
                        if let Some(previous) = &chain[file as usize] {
                            prop_assert_eq!(&result.before_hash, previous);
                        }
                        chain[file as usize] = Some(result.after_hash.clone());
                        match &edit {
                            // Add never shrinks a file.
                            Edit::Add(entry) => {
                                prop_assert!(result.after_size_bytes > result.before_size_bytes);
                                fig.stripped += u64::from(strip(entry).len() != entry.len());
                            }
                            // consolidate(c) twice equals once.
                            Edit::Consolidate(content) => {
                                fig.consolidated_invalid +=
                                    u64::from(first_invalid_byte(&before).is_some());
                                let again = t.ws.consolidate(file, content);
                                let again =
                                    again.map_err(|e| TestCaseError::fail(e.to_string()))?;
                                prop_assert_eq!(&again, &expected_result(file, &after, &after));
                                chain[file as usize] = Some(again.after_hash);
                            }
                            Edit::Replace(..) => {}
                        }
                        model.set(file, Some(after));
                    }
                    (Err(expected), Err(Error::Store { error, message })) => {
                        prop_assert_eq!(
                            as_refusal(file, &error),
                            Some(expected.clone()),
                            "{}: {:?}",
                            described,
                            error
                        );
                        prop_assert_eq!(message, refusal_text(file, &expected));
                        // A rejected write changes nothing, not even `.metis/`.
                        prop_assert_eq!(t.snapshot(), snapshot, "{}", described);
                        fig.invalid_refusals +=
                            u64::from(matches!(expected, Refusal::InvalidUtf8(_)));
                        fig.not_unique += u64::from(matches!(expected, Refusal::NotUnique(_)));
                    }
                    (verdict, outcome) => prop_assert!(
                        false,
                        "{}: model {:?}, component {:?}",
                        described,
                        verdict.map(|b| b.len()),
                        outcome
                    ),
                }
            }
            Step::Plant(file, intent) => {
                let bytes = resolve_plant(intent, *file);
                described = format!(
                    "planting {:?} in {}",
                    bytes.as_ref().map(Vec::len),
                    name(*file)
                );
                plant(t, *file, bytes.as_deref());
                fig.plants += 1;
                let raw = bytes.as_deref().unwrap_or_default();
                fig.invalid_plants += u64::from(first_invalid_byte(raw).is_some());
                fig.over_cap_plants += u64::from(raw.len() > hard_cap(*file));
                model.set(*file, bytes);
                chain[*file as usize] = None;
            }
            Step::Read(file) => {
                let file = *file;
                described = format!("reading {}", name(file));
                fig.reads += generated;
                match (text_of(model.get(file)), t.ws.read(file)) {
                    (Ok(text), Ok(read)) => prop_assert_eq!(read.as_str(), text),
                    (Err(offset), Err(Error::Store { error, message })) => {
                        fig.invalid_refusals += 1;
                        let expected = Refusal::InvalidUtf8(offset);
                        prop_assert_eq!(as_refusal(file, &error), Some(expected.clone()));
                        prop_assert_eq!(message, refusal_text(file, &expected));
                    }
                    (expected, outcome) => prop_assert!(
                        false,
                        "{}: model {:?}, component {:?}",
                        described,
                        expected.map(Short),
                        outcome
                    ),
                }
                let size = model.get(file).map_or(0, <[u8]>::len) as u64;
                prop_assert_eq!(t.ws.exists(file).ok(), Some(model.get(file).is_some()));
                prop_assert_eq!(t.ws.size_bytes(file).ok(), Some(size));
            }
            Step::Prompt(base) => {
                let base = BASES[*base];
                described = format!("assembling the prompt on {base:?}");
                fig.prompts += 1;
                match (model.prompt(base), t.ws.assemble_system_prompt(base)) {
                    (Ok(expected), Ok(prompt)) => prop_assert_eq!(prompt, expected),
                    (Err(bad), Err(Error::Store { error, message })) => {
                        fig.invalid_refusals += 1;
                        let named = bad.iter().find(|(f, offset)| {
                            as_refusal(*f, &error) == Some(Refusal::InvalidUtf8(*offset))
                                && message == refusal_text(*f, &Refusal::InvalidUtf8(*offset))
                        });
                        prop_assert!(named.is_some(), "{}: {:?} {}", described, bad, message);
                    }
                    (expected, outcome) => prop_assert!(
                        false,
                        "{}: model {:?}, component {:?}",
                        described,
                        expected,
                        outcome
                    ),
                }
            }
        }
        disk_matches(t, &model, &described)?;
    }
    // No temporary file or lock survives any sequence.
    let names = t.metis_names();
    prop_assert!(
        names.iter().all(|n| n == "MEMORY.md" || n == "USER.md"),
        "left in .metis/: {:?}",
        names
    );
    fig.boundary_cases += u64::from(boundary);
    Ok(())
}
