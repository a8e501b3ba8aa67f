//! The model: CONTRACT §1 to §6, restated.

use std::fmt;

use metis_memory::{
    EvictionTrigger, MemoryEvent, MemoryEviction, MemoryFile, MemoryUpdated, Operation, StoreError,
    ToolSuccess, WriteResult,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::common::{TestWorkspace, sha256_hex};

const FILES: [MemoryFile; 2] = [MemoryFile::Memory, MemoryFile::User];

/// CONTRACT §1.
pub(crate) fn name(file: MemoryFile) -> &'static str {
    match file {
        MemoryFile::Memory => "MEMORY.md",
        MemoryFile::User => "USER.md",
        MemoryFile::GlobalUser => "~/.metis/USER.md",
    }
}

pub(crate) fn soft_cap(file: MemoryFile) -> usize {
    match file {
        MemoryFile::Memory => 2048,
        MemoryFile::User | MemoryFile::GlobalUser => 1536,
    }
}

pub(crate) fn hard_cap(file: MemoryFile) -> usize {
    match file {
        MemoryFile::Memory => 4096,
        MemoryFile::User | MemoryFile::GlobalUser => 3072,
    }
}

/// CONTRACT §3 step 1: Unicode White_Space (PropList.txt) plus U+001C..U+001F, the set
/// Python's `str.strip()` removes, listed one code point at a time.
pub(crate) const STRIP_SET: [char; 29] = [
    '\u{0009}', '\u{000A}', '\u{000B}', '\u{000C}', '\u{000D}', '\u{001C}', '\u{001D}', '\u{001E}',
    '\u{001F}', '\u{0020}', '\u{0085}', '\u{00A0}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}',
    '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200A}',
    '\u{2028}', '\u{2029}', '\u{202F}', '\u{205F}', '\u{3000}',
];

fn strip_start(s: &str) -> &str {
    let mut rest = s;
    while let Some(c) = rest.chars().next()
        && STRIP_SET.contains(&c)
    {
        rest = &rest[c.len_utf8()..];
    }
    rest
}

fn strip_end(s: &str) -> &str {
    let mut rest = s;
    while let Some(c) = rest.chars().next_back()
        && STRIP_SET.contains(&c)
    {
        rest = &rest[..rest.len() - c.len_utf8()];
    }
    rest
}

pub(crate) fn strip(s: &str) -> &str {
    strip_end(strip_start(s))
}

/// Where `needle` occurs in `hay`, scanning left to right and resuming after each match,
/// so occurrences never overlap (CONTRACT §3 replace step 2: `"aaa"` holds `"aa"` once).
/// An empty `needle` occurs before every character and at the end: chars + 1 times.
pub(crate) fn occurrences(hay: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        let mut at: Vec<usize> = hay.char_indices().map(|(i, _)| i).collect();
        at.push(hay.len());
        return at;
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let mut found = Vec::new();
    let mut i = 0;
    while i + n.len() <= h.len() {
        if &h[i..i + n.len()] == n {
            found.push(i);
            i += n.len();
        } else {
            i += 1;
        }
    }
    found
}

/// The offset of the first byte that does not start a well-formed UTF-8 sequence
/// (Unicode §3.9, table 3-7), or `None` when all of `bytes` is well formed.
pub(crate) fn first_invalid_byte(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < bytes.len() {
        // The sequence's length and the range its second byte must fall in.
        let (len, second) = match bytes[i] {
            0x00..=0x7F => {
                i += 1;
                continue;
            }
            0xC2..=0xDF => (2, 0x80..=0xBF),
            0xE0 => (3, 0xA0..=0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80..=0xBF),
            0xED => (3, 0x80..=0x9F),
            0xF0 => (4, 0x90..=0xBF),
            0xF1..=0xF3 => (4, 0x80..=0xBF),
            0xF4 => (4, 0x80..=0x8F),
            _ => return Some(i),
        };
        let well_formed = (1..len).all(|k| {
            bytes.get(i + k).is_some_and(|b| {
                if k == 1 {
                    second.contains(b)
                } else {
                    (0x80..=0xBF).contains(b)
                }
            })
        });
        if !well_formed {
            return Some(i);
        }
        i += len;
    }
    None
}

/// A file as the store reads it (CONTRACT §2): missing reads as `""`; otherwise its text,
/// or the offset of its first bad byte.
pub(crate) fn text_of(bytes: Option<&[u8]>) -> Result<&str, usize> {
    let bytes = bytes.unwrap_or_default();
    match first_invalid_byte(bytes) {
        Some(offset) => Err(offset),
        None => Ok(std::str::from_utf8(bytes).expect("the model's validator accepted it")),
    }
}

/// A write, with its arguments resolved.
#[derive(Clone)]
pub(crate) enum Edit {
    Add(String),
    Replace(String, String),
    Consolidate(String),
}

impl Edit {
    pub(crate) fn operation(&self) -> Operation {
        match self {
            Edit::Add(_) => Operation::Add,
            Edit::Replace(..) => Operation::Replace,
            Edit::Consolidate(_) => Operation::Consolidate,
        }
    }
}

/// Long texts are shown by their start and size, so failures stay readable.
pub(crate) struct Short<'a>(pub(crate) &'a str);

impl fmt::Debug for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(40) {
            None => write!(f, "{:?}", self.0),
            Some((cut, _)) => write!(f, "{:?}…({} bytes)", &self.0[..cut], self.0.len()),
        }
    }
}

impl fmt::Debug for Edit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Edit::Add(e) => write!(f, "add({:?})", Short(e)),
            Edit::Replace(o, n) => write!(f, "replace({:?}, {:?})", Short(o), Short(n)),
            Edit::Consolidate(c) => write!(f, "consolidate({:?})", Short(c)),
        }
    }
}

/// Why the model expects a write to be refused (CONTRACT §3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    EmptyEntry,
    InvalidUtf8(usize),
    NothingToReplace,
    NotFound,
    NotUnique(usize),
    HardCap(usize),
}

/// The refusal's text: CONTRACT §3's where it gives one, docs/behaviour.md's for invalid UTF-8.
pub(crate) fn refusal_text(memory_file: MemoryFile, refusal: &Refusal) -> String {
    let file = name(memory_file);
    match refusal {
        Refusal::EmptyEntry => "entry must be non-empty".to_owned(),
        Refusal::InvalidUtf8(offset) => format!(
            "{file} is not valid UTF-8 (first invalid byte at offset {offset}); only memory_consolidate can replace it"
        ),
        Refusal::NothingToReplace => format!("{file} is empty; nothing to replace"),
        Refusal::NotFound => format!("replace source not found in {file}"),
        Refusal::NotUnique(n) => {
            format!("replace source appears {n} times in {file}; must be unique")
        }
        Refusal::HardCap(attempted) => format!(
            "{file} write rejected: {attempted} bytes exceeds hard cap {}; consolidate before adding more",
            hard_cap(memory_file)
        ),
    }
}

/// The component's store error in the model's terms, if it is one the model knows and
/// its payload names the right file and cap.
pub(crate) fn as_refusal(file: MemoryFile, error: &StoreError) -> Option<Refusal> {
    Some(match error {
        StoreError::HardCapExceeded(info)
            if info.file == file && info.cap_bytes == hard_cap(file) as u64 =>
        {
            Refusal::HardCap(info.attempted_bytes as usize)
        }
        StoreError::EmptyEntry(_) => Refusal::EmptyEntry,
        StoreError::NothingToReplace(_) => Refusal::NothingToReplace,
        StoreError::NotFound(_) => Refusal::NotFound,
        StoreError::NotUnique(info) => Refusal::NotUnique(info.count as usize),
        StoreError::InvalidUtf8(info) if info.file == file => {
            Refusal::InvalidUtf8(info.offset as usize)
        }
        _ => return None,
    })
}

/// What is on disk, as the model believes it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Model {
    files: [Option<Vec<u8>>; 2],
    /// Whether `.metis/` exists: only a successful write (or a plant) creates it.
    metis: bool,
}

impl Model {
    pub(crate) fn get(&self, file: MemoryFile) -> Option<&[u8]> {
        self.files[file as usize].as_deref()
    }

    pub(crate) fn set(&mut self, file: MemoryFile, bytes: Option<Vec<u8>>) {
        self.metis |= bytes.is_some();
        self.files[file as usize] = bytes;
    }

    /// CONTRACT §3, checks in its order: the new bytes, or the first check that fails.
    pub(crate) fn write(&self, file: MemoryFile, edit: &Edit) -> Result<Vec<u8>, Refusal> {
        let current = self.get(file);
        let after = match edit {
            Edit::Add(entry) => {
                let entry = strip(entry);
                if entry.is_empty() {
                    return Err(Refusal::EmptyEntry);
                }
                let mut text = text_of(current).map_err(Refusal::InvalidUtf8)?.to_owned();
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text + entry + "\n"
            }
            Edit::Replace(old, new) => {
                let text = text_of(current).map_err(Refusal::InvalidUtf8)?;
                if text.is_empty() {
                    return Err(Refusal::NothingToReplace);
                }
                match occurrences(text, old)[..] {
                    [] => return Err(Refusal::NotFound),
                    [at] => format!("{}{new}{}", &text[..at], &text[at + old.len()..]),
                    ref many => return Err(Refusal::NotUnique(many.len())),
                }
            }
            // Never needs the old bytes to be text.
            Edit::Consolidate(content) => content.clone(),
        };
        if after.len() > hard_cap(file) {
            return Err(Refusal::HardCap(after.len()));
        }
        Ok(after.into_bytes())
    }

    /// CONTRACT §4, or the unreadable files (with the offset of their first bad byte).
    pub(crate) fn prompt(&self, base: &str) -> Result<String, Vec<(MemoryFile, usize)>> {
        let (user, memory) = (
            text_of(self.get(MemoryFile::User)),
            text_of(self.get(MemoryFile::Memory)),
        );
        let (Ok(user), Ok(memory)) = (user, memory) else {
            let bad = [(MemoryFile::User, user), (MemoryFile::Memory, memory)];
            return Err(bad
                .into_iter()
                .filter_map(|(f, t)| t.err().map(|offset| (f, offset)))
                .collect());
        };
        let mut parts = Vec::new();
        for (part, heading) in [
            (strip_end(base), None),
            (strip(user), Some("## User context (USER.md)")),
            (strip(memory), Some("## Workspace memory (MEMORY.md)")),
        ] {
            match (part.is_empty(), heading) {
                (true, _) => {}
                (false, None) => parts.push(part.to_owned()),
                (false, Some(heading)) => parts.push(format!("{heading}\n{part}")),
            }
        }
        Ok(parts.join("\n\n"))
    }
}

/// CONTRACT §3 and §1: the write result for `before` becoming `after`.
pub(crate) fn expected_result(file: MemoryFile, before: &[u8], after: &[u8]) -> WriteResult {
    WriteResult {
        file,
        before_hash: sha256_hex(before),
        after_hash: sha256_hex(after),
        before_size_bytes: before.len() as u64,
        after_size_bytes: after.len() as u64,
        over_soft_cap: after.len() > soft_cap(file),
        over_hard_cap: false,
    }
}

/// CONTRACT §5's success texts, with the soft-cap hint on all three tools.
fn expected_text(operation: Operation, r: &WriteResult) -> String {
    let file = name(r.file);
    let (before, after) = (r.before_size_bytes, r.after_size_bytes);
    let text = match operation {
        Operation::Add => format!("appended to {file} ({after} bytes total)"),
        Operation::Replace => format!("replaced in {file} ({after} bytes total)"),
        Operation::Consolidate => format!("consolidated {file}: {before} → {after} bytes"),
    };
    if r.over_soft_cap {
        text + " — over soft cap; consider memory_consolidate"
    } else {
        text
    }
}

/// CONTRACT §6.
fn expected_events(operation: Operation, r: &WriteResult) -> Vec<MemoryEvent> {
    let mut events = vec![MemoryEvent::Updated(MemoryUpdated {
        file: r.file,
        operation,
        before_hash: r.before_hash.clone(),
        after_hash: r.after_hash.clone(),
        before_size_bytes: r.before_size_bytes,
        after_size_bytes: r.after_size_bytes,
    })];
    if r.over_soft_cap {
        events.push(MemoryEvent::Eviction(MemoryEviction {
            file: r.file,
            trigger: EvictionTrigger::SizeCapExceeded,
            entries_evicted: 0,
            size_before_bytes: r.before_size_bytes,
            size_after_bytes: r.after_size_bytes,
        }));
    }
    events
}

/// A successful tool call carries exactly what the model says.
pub(crate) fn check_success(
    file: MemoryFile,
    edit: &Edit,
    before: &[u8],
    after: &[u8],
    success: &ToolSuccess,
) -> Result<(), TestCaseError> {
    let operation = edit.operation();
    let result = expected_result(file, before, after);
    prop_assert_eq!(&success.result, &result, "{:?}", edit);
    prop_assert_eq!(success.operation, operation);
    prop_assert_eq!(&success.text, &expected_text(operation, &result));
    prop_assert_eq!(&success.events, &expected_events(operation, &result));
    Ok(())
}

/// Whether a write's attempted size is within two bytes of either cap.
pub(crate) fn at_boundary(file: MemoryFile, attempted: usize) -> bool {
    [soft_cap(file), hard_cap(file)]
        .iter()
        .any(|&cap| attempted.abs_diff(cap) <= 2)
}

/// The size the cap check saw, when the model got that far.
pub(crate) fn attempted(verdict: &Result<Vec<u8>, Refusal>) -> Option<usize> {
    match verdict {
        Ok(after) => Some(after.len()),
        Err(Refusal::HardCap(n)) => Some(*n),
        Err(_) => None,
    }
}

/// Disk equals the model, both files and `.metis/` itself; on a difference, says where.
pub(crate) fn disk_matches(
    t: &TestWorkspace,
    model: &Model,
    step: &str,
) -> Result<(), TestCaseError> {
    for file in FILES {
        let (disk, expected) = (t.bytes(file), model.get(file));
        if disk.as_deref() == expected {
            continue;
        }
        let size = |b: Option<&[u8]>| b.map_or("missing".to_owned(), |b| format!("{} B", b.len()));
        let at = match (disk.as_deref(), expected) {
            (Some(d), Some(e)) => (0..d.len().min(e.len()))
                .find(|&i| d[i] != e[i])
                .unwrap_or(d.len().min(e.len())),
            _ => 0,
        };
        let around = |b: Option<&[u8]>| {
            let b = b.unwrap_or_default();
            String::from_utf8_lossy(&b[at.saturating_sub(12).min(b.len())..(at + 24).min(b.len())])
                .into_owned()
        };
        return Err(TestCaseError::fail(format!(
            "after {step}: {} on disk is {}, the model says {}; first difference at byte {at}: disk {:?}, model {:?}",
            name(file),
            size(disk.as_deref()),
            size(expected),
            around(disk.as_deref()),
            around(expected),
        )));
    }
    prop_assert_eq!(t.metis().exists(), model.metis, "after {}: .metis/", step);
    Ok(())
}
