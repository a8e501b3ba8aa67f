//! Tool calls: generated as members rendered to JSON text here, so the validity model
//! decides from the members (duplicates included) and never re-parses.

use std::fmt::Write as _;

use metis_memory::{Error, MemoryFile, ScanPolicy};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::generate::{
    EditIntent, PlantIntent, Rng, edit_intent, file, plant, plant_intent, resolve_edit,
    resolve_plant,
};
use super::model::{
    Edit, Model, Refusal, Short, at_boundary, attempted, check_success, disk_matches,
    first_invalid_byte, name, refusal_text,
};
use crate::common::TestWorkspace;

/// A JSON value, as generated.
#[derive(Clone, Debug)]
enum Val {
    Str(String),
    /// A number literal, as written.
    Num(&'static str),
    Bool(bool),
    Null,
    Array(Vec<Val>),
    Object(Vec<(String, Val)>),
}

/// How a generated call departs from its tool's schema (the model does not look at this:
/// it judges the members).
#[derive(Clone, Debug)]
enum Shape {
    Valid,
    Missing(usize),
    Extra(&'static str, Val),
    Duplicate(usize, Val),
    WrongType(usize, Val),
    OutsideEnum(&'static str),
    EmptyEntry,
    NotObject(usize),
    NotJson(usize),
    UnknownTool(&'static str),
}

pub(crate) const SHAPES: [&str; 10] = [
    "valid",
    "missing",
    "extra",
    "duplicate",
    "wrong type",
    "outside the enum",
    "empty entry",
    "not an object",
    "not JSON",
    "unknown tool",
];

impl Shape {
    fn index(&self) -> usize {
        match self {
            Shape::Valid => 0,
            Shape::Missing(_) => 1,
            Shape::Extra(..) => 2,
            Shape::Duplicate(..) => 3,
            Shape::WrongType(..) => 4,
            Shape::OutsideEnum(_) => 5,
            Shape::EmptyEntry => 6,
            Shape::NotObject(_) => 7,
            Shape::NotJson(_) => 8,
            Shape::UnknownTool(_) => 9,
        }
    }
}

fn non_string() -> impl Strategy<Value = Val> {
    let number = prop::sample::select(vec![
        "0",
        "-1",
        "3.5",
        "1e3",
        "-0.0",
        "12345678901234567890",
    ]);
    prop_oneof![
        number.prop_map(Val::Num),
        any::<bool>().prop_map(Val::Bool),
        Just(Val::Null),
        Just(Val::Array(vec![])),
        Just(Val::Array(vec![Val::Str("MEMORY.md".into())])),
        Just(Val::Object(vec![])),
        Just(Val::Object(vec![(
            "file".into(),
            Val::Str("USER.md".into())
        )])),
    ]
}

fn any_value() -> impl Strategy<Value = Val> {
    prop_oneof![
        non_string(),
        prop::sample::select(vec!["", "x", "MEMORY.md", "USER.md"])
            .prop_map(|s| Val::Str(s.into())),
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        70 => Just(Shape::Valid),
        4 => (0usize..3).prop_map(Shape::Missing),
        4 => (
            prop::sample::select(vec!["extra", "File", "file ", "entry", "content", "old", ""]),
            any_value(),
        )
            .prop_map(|(k, v)| Shape::Extra(k, v)),
        4 => (0usize..3, any_value()).prop_map(|(i, v)| Shape::Duplicate(i, v)),
        4 => (0usize..3, non_string()).prop_map(|(i, v)| Shape::WrongType(i, v)),
        4 => prop::sample::select(vec![
            "memory.md", "NOTES.md", "../USER.md", "", " MEMORY.md", "USER.MD", "MEMORY.md\u{0}",
            ".metis/MEMORY.md",
        ])
        .prop_map(Shape::OutsideEnum),
        3 => Just(Shape::EmptyEntry),
        3 => (0usize..6).prop_map(Shape::NotObject),
        3 => (0usize..7).prop_map(Shape::NotJson),
        3 => prop::sample::select(vec![
            "memory_forget", "Memory_add", "memory_add ", "memory-add", "", "memory_addx",
            "MEMORY_CONSOLIDATE", "read",
        ])
        .prop_map(Shape::UnknownTool),
    ]
}

#[derive(Clone, Debug)]
pub(crate) struct CallIntent {
    file: MemoryFile,
    edit: EditIntent,
    shape: Shape,
    seed: u64,
    escapes: bool,
}

fn call_intent() -> impl Strategy<Value = CallIntent> {
    (file(), edit_intent(), shape(), any::<u64>(), any::<bool>()).prop_map(
        |(file, edit, shape, seed, escapes)| CallIntent {
            file,
            edit,
            shape,
            seed,
            escapes,
        },
    )
}

/// What was sent, as the validity model sees it.
#[derive(Debug)]
enum Input {
    Object(Vec<(String, Val)>),
    NotObject,
    NotJson,
}

/// Optional JSON whitespace.
fn gap(rng: &mut Rng, out: &mut String) {
    if rng.percent(20) {
        out.push_str(rng.pick::<&str>(&[" ", "\n", "\t", "\r\n  "]));
    }
}

/// `s` as a JSON string; with `escapes`, some characters written as `\uXXXX` (surrogate
/// pairs above the BMP) or `\/`.
fn render_string(s: &str, rng: &mut Rng, escapes: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            '/' if escapes && rng.percent(50) => out.push_str("\\/"),
            c if escapes && rng.percent(20) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    if rng.percent(50) {
                        write!(out, "\\u{unit:04x}").unwrap();
                    } else {
                        write!(out, "\\u{unit:04X}").unwrap();
                    }
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn render_value(value: &Val, rng: &mut Rng, escapes: bool, out: &mut String) {
    match value {
        Val::Str(s) => render_string(s, rng, escapes, out),
        Val::Num(n) => out.push_str(n),
        Val::Bool(b) => write!(out, "{b}").unwrap(),
        Val::Null => out.push_str("null"),
        Val::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gap(rng, out);
                render_value(item, rng, escapes, out);
                gap(rng, out);
            }
            out.push(']');
        }
        Val::Object(members) => {
            out.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gap(rng, out);
                render_string(key, rng, escapes, out);
                gap(rng, out);
                out.push(':');
                gap(rng, out);
                render_value(value, rng, escapes, out);
                gap(rng, out);
            }
            out.push('}');
        }
    }
}

fn render(value: &Val, rng: &mut Rng, escapes: bool) -> String {
    let mut out = String::new();
    gap(rng, &mut out);
    render_value(value, rng, escapes, &mut out);
    gap(rng, &mut out);
    out
}

/// A call resolved against the model: the tool name, the JSON text sent, and what it is.
struct Call {
    name: String,
    text: String,
    input: Input,
}

fn resolve_call(intent: &CallIntent, model: &Model) -> Call {
    let file = Val::Str(name(intent.file).to_owned());
    let s = |text: &String| Val::Str(text.clone());
    let edit = resolve_edit(&intent.edit, intent.file, model);
    let (tool, mut members) = match &edit {
        Edit::Add(entry) => ("memory_add", vec![("file", file), ("entry", s(entry))]),
        Edit::Replace(old, new) => (
            "memory_replace",
            vec![("file", file), ("old", s(old)), ("new", s(new))],
        ),
        Edit::Consolidate(content) => (
            "memory_consolidate",
            vec![("file", file), ("content", s(content))],
        ),
    };
    let mut rng = Rng(intent.seed);
    for i in (1..members.len()).rev() {
        members.swap(i, rng.below(i + 1));
    }
    let mut members: Vec<(String, Val)> = members
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let mut tool = tool.to_owned();
    let len = members.len();
    let mut input = None;
    match &intent.shape {
        Shape::Valid => {}
        Shape::Missing(i) => {
            members.remove(i % len);
        }
        Shape::Extra(key, value) => {
            members.insert(rng.below(len + 1), (key.to_string(), value.clone()))
        }
        Shape::Duplicate(i, value) => {
            let key = members[i % len].0.clone();
            members.insert(rng.below(len + 1), (key, value.clone()));
        }
        Shape::WrongType(i, value) => members[i % len].1 = value.clone(),
        Shape::OutsideEnum(name) => {
            for (key, value) in &mut members {
                if key == "file" {
                    *value = Val::Str(name.to_string());
                }
            }
        }
        Shape::EmptyEntry => match members.iter_mut().find(|(key, _)| key == "entry") {
            Some((_, value)) => *value = Val::Str(String::new()),
            None => members.push(("entry".to_owned(), Val::Str(String::new()))),
        },
        Shape::NotObject(kind) => {
            let object = Val::Object(members.clone());
            let value = match kind {
                0 => Val::Array(vec![object]),
                1 => Val::Str(render(&object, &mut rng, false)),
                2 => Val::Num("42"),
                3 => Val::Null,
                4 => Val::Bool(true),
                _ => Val::Array(vec![]),
            };
            input = Some((render(&value, &mut rng, intent.escapes), Input::NotObject));
        }
        Shape::NotJson(kind) => {
            let full = render(&Val::Object(members.clone()), &mut rng, intent.escapes);
            let close = full.rfind('}').unwrap();
            let text = match kind {
                0 => {
                    let mut cut = rng.below(close);
                    while !full.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    full[..cut].to_owned()
                }
                1 => full + " x",
                2 => format!("{},{}", &full[..close], &full[close..]),
                3 => "{'file': 'MEMORY.md', 'content': 'x'}".to_owned(),
                4 => String::new(),
                5 => "{file: \"MEMORY.md\"}".to_owned(),
                _ => "{}{}".to_owned(),
            };
            input = Some((text, Input::NotJson));
        }
        Shape::UnknownTool(name) => tool = name.to_string(),
    }
    let (text, input) = input.unwrap_or_else(|| {
        let text = render(&Val::Object(members.clone()), &mut rng, intent.escapes);
        (text, Input::Object(members))
    });
    Call {
        name: tool,
        text,
        input,
    }
}

/// Why the model expects a call to be refused before it reaches the store.
#[derive(Debug)]
enum Invalid {
    UnknownTool,
    NotJson,
    NotObject,
    /// The properties that are missing, given twice, of the wrong type, outside the enum,
    /// empty where `minLength` is 1, or not allowed.
    Properties(Vec<String>),
}

/// CONTRACT §5's schemas (and docs/api.md's choice of refusing a property given twice),
/// applied to the members as generated: the write a valid call makes.
fn model_call(tool: &str, input: &Input) -> Result<(MemoryFile, Edit), Invalid> {
    let properties: &[&str] = match tool {
        "memory_add" => &["file", "entry"],
        "memory_replace" => &["file", "old", "new"],
        "memory_consolidate" => &["file", "content"],
        _ => return Err(Invalid::UnknownTool),
    };
    let members = match input {
        Input::NotJson => return Err(Invalid::NotJson),
        Input::NotObject => return Err(Invalid::NotObject),
        Input::Object(members) => members,
    };
    let mut wrong = Vec::new();
    let mut strings = Vec::new();
    for &property in properties {
        let values: Vec<&Val> = members
            .iter()
            .filter(|(key, _)| key == property)
            .map(|(_, value)| value)
            .collect();
        match values[..] {
            [Val::Str(text)] => {
                let outside_enum = property == "file" && text != "MEMORY.md" && text != "USER.md";
                let too_short = property == "entry" && text.chars().count() < 1;
                if outside_enum || too_short {
                    wrong.push(property.to_owned());
                }
                strings.push(text.clone());
            }
            _ => wrong.push(property.to_owned()),
        }
    }
    for (key, _) in members {
        if !properties.contains(&key.as_str()) {
            wrong.push(key.clone());
        }
    }
    if !wrong.is_empty() {
        return Err(Invalid::Properties(wrong));
    }
    let file = if strings[0] == "MEMORY.md" {
        MemoryFile::Memory
    } else {
        MemoryFile::User
    };
    let text = |i: usize| strings[i].clone();
    Ok((
        file,
        match tool {
            "memory_add" => Edit::Add(text(1)),
            "memory_replace" => Edit::Replace(text(1), text(2)),
            _ => Edit::Consolidate(text(1)),
        },
    ))
}

#[derive(Clone, Debug)]
pub(crate) enum ToolStep {
    Call(CallIntent),
    Plant(MemoryFile, PlantIntent),
}

pub(crate) fn tool_step() -> impl Strategy<Value = ToolStep> {
    prop_oneof![
        10 => call_intent().prop_map(ToolStep::Call),
        1 => (file(), plant_intent()).prop_map(|(f, p)| ToolStep::Plant(f, p)),
    ]
}

#[derive(Default)]
pub(crate) struct ToolFigures {
    pub(crate) cases: u64,
    pub(crate) calls: u64,
    pub(crate) valid: u64,
    pub(crate) written: u64,
    pub(crate) store_refusals: u64,
    pub(crate) invalid_utf8_refusals: u64,
    pub(crate) hints: [u64; 3],
    pub(crate) shapes: [u64; 10],
    pub(crate) escaped: u64,
    pub(crate) boundary_calls: u64,
    pub(crate) boundary_cases: u64,
    pub(crate) plants: u64,
    pub(crate) invalid_plants: u64,
}

const OFF: ScanPolicy = ScanPolicy {
    invisible_characters: false,
    injection_patterns: false,
};

pub(crate) fn tool_case(
    t: &TestWorkspace,
    steps: &[ToolStep],
    fig: &mut ToolFigures,
) -> Result<(), TestCaseError> {
    let mut model = Model::default();
    let mut boundary = false;
    for step in steps {
        let intent = match step {
            ToolStep::Plant(file, intent) => {
                let bytes = resolve_plant(intent, *file);
                plant(t, *file, bytes.as_deref());
                fig.plants += 1;
                fig.invalid_plants +=
                    u64::from(first_invalid_byte(bytes.as_deref().unwrap_or_default()).is_some());
                model.set(*file, bytes);
                continue;
            }
            ToolStep::Call(intent) => intent,
        };
        let call = resolve_call(intent, &model);
        let described = format!("{} {:?}", call.name, Short(&call.text));
        fig.calls += 1;
        fig.shapes[intent.shape.index()] += 1;
        fig.escaped += u64::from(call.text.contains("\\u"));
        let snapshot = t.snapshot();
        let outcome = super::call_unheld(&t.ws, &call.name, &call.text, OFF);
        match (model_call(&call.name, &call.input), outcome) {
            (Ok((file, edit)), outcome) => {
                fig.valid += 1;
                let before = model.get(file).unwrap_or_default().to_vec();
                let verdict = model.write(file, &edit);
                if let Some(size) = attempted(&verdict)
                    && at_boundary(file, size)
                {
                    fig.boundary_calls += 1;
                    boundary = true;
                }
                match (verdict, outcome) {
                    (Ok(after), Ok(success)) => {
                        fig.written += 1;
                        check_success(file, &edit, &before, &after, &success)?;
                        if success.result.over_soft_cap {
                            fig.hints[edit.operation() as usize] += 1;
                        }
                        model.set(file, Some(after));
                    }
                    (Err(refusal), Err(Error::Tool(error))) => {
                        fig.store_refusals += 1;
                        fig.invalid_utf8_refusals +=
                            u64::from(matches!(refusal, Refusal::InvalidUtf8(_)));
                        prop_assert!(error.is_user_visible);
                        prop_assert_eq!(
                            &error.message,
                            &refusal_text(file, &refusal),
                            "{}",
                            described
                        );
                        prop_assert_eq!(t.snapshot(), snapshot, "{}", described);
                    }
                    (verdict, outcome) => prop_assert!(
                        false,
                        "{} ({:?}): model {:?}, component {:?}",
                        described,
                        edit,
                        verdict.map(|b| b.len()),
                        outcome
                    ),
                }
            }
            (Err(invalid), Err(Error::Tool(error))) => {
                prop_assert!(error.is_user_visible);
                prop_assert_eq!(t.snapshot(), snapshot, "{}", described);
                let m = &error.message;
                match &invalid {
                    Invalid::UnknownTool => prop_assert!(
                        ["memory_add", "memory_replace", "memory_consolidate"]
                            .iter()
                            .all(|tool| m.contains(tool)),
                        "{}: {}",
                        described,
                        m
                    ),
                    Invalid::NotJson | Invalid::NotObject => prop_assert!(
                        m.starts_with(&format!("invalid input for {}: ", call.name)),
                        "{}: {}",
                        described,
                        m
                    ),
                    Invalid::Properties(keys) => {
                        // Each wrong property is named, in quotes.
                        prop_assert!(
                            m.starts_with(&format!("invalid input for {}: ", call.name))
                                && keys.iter().all(|k| m.contains(&format!("\"{k}\""))),
                            "{}: expected {:?} named in {}",
                            described,
                            keys,
                            m
                        );
                    }
                }
            }
            (expected, outcome) => prop_assert!(
                false,
                "{}: model {:?}, component {:?}",
                described,
                expected,
                outcome
            ),
        }
        disk_matches(t, &model, &described)?;
    }
    fig.boundary_cases += u64::from(boundary);
    Ok(())
}
