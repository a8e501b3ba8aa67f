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

mod common;

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::sync::LazyLock;

use common::{TestWorkspace, sha256_hex};
use metis_memory::{
    Error, EvictionTrigger, MemoryEvent, MemoryEviction, MemoryFile, MemoryUpdated, Operation,
    ScanPolicy, StoreError, ToolSuccess, WriteResult,
};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// The model: CONTRACT §1 to §6, restated.

const FILES: [MemoryFile; 2] = [MemoryFile::Memory, MemoryFile::User];

/// CONTRACT §1.
fn name(file: MemoryFile) -> &'static str {
    match file {
        MemoryFile::Memory => "MEMORY.md",
        MemoryFile::User => "USER.md",
    }
}

fn soft_cap(file: MemoryFile) -> usize {
    match file {
        MemoryFile::Memory => 2048,
        MemoryFile::User => 1536,
    }
}

fn hard_cap(file: MemoryFile) -> usize {
    match file {
        MemoryFile::Memory => 4096,
        MemoryFile::User => 3072,
    }
}

/// CONTRACT §3 step 1: Unicode White_Space (PropList.txt) plus U+001C..U+001F, the set
/// Python's `str.strip()` removes, listed one code point at a time.
const STRIP_SET: [char; 29] = [
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

fn strip(s: &str) -> &str {
    strip_end(strip_start(s))
}

/// Where `needle` occurs in `hay`, scanning left to right and resuming after each match,
/// so occurrences never overlap (CONTRACT §3 replace step 2: `"aaa"` holds `"aa"` once).
/// An empty `needle` occurs before every character and at the end: chars + 1 times.
fn occurrences(hay: &str, needle: &str) -> Vec<usize> {
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
fn first_invalid_byte(bytes: &[u8]) -> Option<usize> {
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
fn text_of(bytes: Option<&[u8]>) -> Result<&str, usize> {
    let bytes = bytes.unwrap_or_default();
    match first_invalid_byte(bytes) {
        Some(offset) => Err(offset),
        None => Ok(std::str::from_utf8(bytes).expect("the model's validator accepted it")),
    }
}

/// A write, with its arguments resolved.
#[derive(Clone)]
enum Edit {
    Add(String),
    Replace(String, String),
    Consolidate(String),
}

impl Edit {
    fn operation(&self) -> Operation {
        match self {
            Edit::Add(_) => Operation::Add,
            Edit::Replace(..) => Operation::Replace,
            Edit::Consolidate(_) => Operation::Consolidate,
        }
    }
}

/// Long texts are shown by their start and size, so failures stay readable.
struct Short<'a>(&'a str);

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
enum Refusal {
    EmptyEntry,
    InvalidUtf8(usize),
    NothingToReplace,
    NotFound,
    NotUnique(usize),
    HardCap(usize),
}

/// The refusal's text: CONTRACT §3's where it gives one, the README's for invalid UTF-8.
fn refusal_text(memory_file: MemoryFile, refusal: &Refusal) -> String {
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
fn as_refusal(file: MemoryFile, error: &StoreError) -> Option<Refusal> {
    Some(match error {
        StoreError::HardCapExceeded(info)
            if info.file == file && info.cap_bytes == hard_cap(file) as u64 =>
        {
            Refusal::HardCap(info.attempted_bytes as usize)
        }
        StoreError::EmptyEntry => Refusal::EmptyEntry,
        StoreError::NothingToReplace => Refusal::NothingToReplace,
        StoreError::NotFound => Refusal::NotFound,
        StoreError::NotUnique(n) => Refusal::NotUnique(*n as usize),
        StoreError::InvalidUtf8(info) if info.file == file => {
            Refusal::InvalidUtf8(info.offset as usize)
        }
        _ => return None,
    })
}

/// What is on disk, as the model believes it.
#[derive(Clone, Debug, Default)]
struct Model {
    files: [Option<Vec<u8>>; 2],
    /// Whether `.metis/` exists: only a successful write (or a plant) creates it.
    metis: bool,
}

impl Model {
    fn get(&self, file: MemoryFile) -> Option<&[u8]> {
        self.files[file as usize].as_deref()
    }

    fn set(&mut self, file: MemoryFile, bytes: Option<Vec<u8>>) {
        self.metis |= bytes.is_some();
        self.files[file as usize] = bytes;
    }

    /// CONTRACT §3, checks in its order: the new bytes, or the first check that fails.
    fn write(&self, file: MemoryFile, edit: &Edit) -> Result<Vec<u8>, Refusal> {
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
    fn prompt(&self, base: &str) -> Result<String, Vec<(MemoryFile, usize)>> {
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
fn expected_result(file: MemoryFile, before: &[u8], after: &[u8]) -> WriteResult {
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
fn check_success(
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
fn at_boundary(file: MemoryFile, attempted: usize) -> bool {
    [soft_cap(file), hard_cap(file)]
        .iter()
        .any(|&cap| attempted.abs_diff(cap) <= 2)
}

/// The size the cap check saw, when the model got that far.
fn attempted(verdict: &Result<Vec<u8>, Refusal>) -> Option<usize> {
    match verdict {
        Ok(after) => Some(after.len()),
        Err(Refusal::HardCap(n)) => Some(*n),
        Err(_) => None,
    }
}

/// Disk equals the model, both files and `.metis/` itself; on a difference, says where.
fn disk_matches(t: &TestWorkspace, model: &Model, step: &str) -> Result<(), TestCaseError> {
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

// ---------------------------------------------------------------------------------------
// Generators: intentions, resolved against the model's state when the step runs.

/// splitmix64, for the choices that depend on the state at run time: seeded by proptest,
/// so a failing case replays and shrinks.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Visible characters by UTF-8 width, 1 to 4 bytes: text whose byte and character counts
/// differ, so a component counting characters diverges. None is whitespace, invisible or
/// a markup character the poisoning scan looks at.
const WIDTHS: [&[char]; 4] = [
    &[
        'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'k', 'm', 'n', 'o', 'p', 'r', 's', 't', 'u', '0',
        '1', '7', '-', '.', ',', ':', '#', '*',
    ],
    &['é', 'ß', 'ж', 'ω', 'ñ', 'ø', 'ü', 'ł'],
    &['€', 'あ', '中', '∑', 'ก', 'ㄱ', '→', '✓'],
    &['🦀', '𝄞', '😀', '𐍈', '🎉'],
];

/// Whitespace generated text may hold inside: kept by every edit (stripped only at the
/// ends of an entry), so CRLF and U+001C must come back byte for byte.
const INNER_SPACES: &[&str] = &[
    " ", " ", " ", "\n", "\n", "\t", "\r\n", "\u{a0}", "\u{3000}", "\u{2028}", "\u{1c}",
];

/// What the scanned property's filler may hold: nothing the scan refuses.
const SCAN_SAFE_SPACES: &[&str] = &[" ", " ", "\n"];

/// Characters that look blank but are not in the strip set: an entry keeps them.
const LOOK_ALIKES: [char; 7] = [
    '\u{200B}', '\u{180E}', '\u{FEFF}', '\u{2060}', '\u{1}', '\u{7F}', '\u{AD}',
];

/// Exactly `n` bytes of varied text, mostly in `width`-byte characters, with `spaces`
/// only inside (never first or last, so stripping leaves it whole) and a few runs of `a`.
fn filler(rng: &mut Rng, n: usize, width: usize, spaces: &[&str]) -> String {
    let mut out = String::with_capacity(n);
    while out.len() < n {
        let left = n - out.len();
        // Now and then a run of `a`, so `aa` and `aaa` overlap themselves in most files.
        if left > 5 && rng.percent(2) {
            out.push_str(&"a".repeat(2 + rng.below(4)));
            continue;
        }
        if !out.is_empty() && !spaces.is_empty() && rng.percent(15) {
            let space = *rng.pick(spaces);
            if space.len() < left {
                out.push_str(space);
                continue;
            }
        }
        let w = if left >= width && rng.percent(80) {
            width
        } else {
            1 + rng.below(left.min(4))
        };
        out.push(*rng.pick(WIDTHS[w - 1]));
    }
    out
}

/// `min..=max` characters from the strip set.
fn blank(rng: &mut Rng, min: usize, max: usize) -> String {
    let n = min + rng.below(max - min + 1);
    (0..n).map(|_| *rng.pick(&STRIP_SET)).collect()
}

/// Lines ending in CRLF.
fn crlf_lines(rng: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..1 + rng.below(5) {
        let n = 1 + rng.below(30);
        let width = 1 + rng.below(4);
        s += &filler(rng, n, width, &[" "]);
        s += "\r\n";
    }
    s
}

/// Runs of `a` (so `aa` occurs once in `aaa` and twice in `aaaa`, counted without
/// overlaps).
fn runs(rng: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..1 + rng.below(4) {
        s += &"a".repeat(1 + rng.below(5));
        s += rng.pick::<&str>(&[" ", "\n", "b", "-é-"]);
    }
    s
}

#[derive(Clone, Copy, Debug)]
enum Cap {
    Soft,
    Hard,
}

/// A size aimed at a cap: the cap plus `delta` bytes, in characters `width` bytes wide.
#[derive(Clone, Copy, Debug)]
struct Aim {
    cap: Cap,
    delta: i64,
    width: usize,
    seed: u64,
}

impl Aim {
    fn target(self, file: MemoryFile) -> usize {
        let cap = match self.cap {
            Cap::Soft => soft_cap(file),
            Cap::Hard => hard_cap(file),
        };
        (cap as i64 + self.delta) as usize
    }
}

fn aim() -> impl Strategy<Value = Aim> {
    (any::<bool>(), -2i64..=2, 1usize..=4, any::<u64>()).prop_map(|(hard, delta, width, seed)| {
        Aim {
            cap: if hard { Cap::Hard } else { Cap::Soft },
            delta,
            width,
            seed,
        }
    })
}

fn file() -> impl Strategy<Value = MemoryFile> {
    prop_oneof![Just(MemoryFile::Memory), Just(MemoryFile::User)]
}

#[derive(Clone, Debug)]
enum EntryIntent {
    /// An entry that brings the file to the aimed size.
    Sized(Aim),
    /// A few words.
    Short { seed: u64, width: usize },
    /// A few words wrapped in characters of the strip set, which add removes.
    Padded { seed: u64, width: usize },
    /// Only characters of the strip set, or nothing.
    Blank { seed: u64 },
    /// Words that begin or end with a character that looks blank but is kept.
    LookAlike { seed: u64 },
}

#[derive(Clone, Debug)]
enum OldIntent {
    /// A piece of the file's current text, lengthened until it is unique.
    Unique {
        seed: u64,
    },
    /// The whole current text.
    Whole,
    /// One character of the file: usually there more than once.
    Repeated {
        seed: u64,
    },
    /// `aa` or `aaa`, for files made of runs of `a`.
    Overlap {
        long: bool,
    },
    /// Text the file does not hold.
    Absent,
    Empty,
}

#[derive(Clone, Debug)]
enum NewIntent {
    /// A replacement that brings the file to the aimed size.
    Sized(Aim),
    Short {
        seed: u64,
        width: usize,
    },
    Empty,
    /// Words wrapped in whitespace, which replace keeps.
    Spacey {
        seed: u64,
    },
}

#[derive(Clone, Debug)]
enum ContentIntent {
    Sized(Aim),
    Short { seed: u64, width: usize },
    Empty,
    Spacey { seed: u64 },
    Crlf { seed: u64 },
    Runs { seed: u64 },
}

#[derive(Clone, Debug)]
enum EditIntent {
    Add(EntryIntent),
    Replace(OldIntent, NewIntent),
    Consolidate(ContentIntent),
}

/// Where a plant puts its invalid bytes.
#[derive(Clone, Debug)]
enum InvalidAt {
    Start,
    Early(usize),
    NearCap(Aim),
}

/// Bytes that are not UTF-8.
const BAD_SEQUENCES: [&[u8]; 10] = [
    b"\x80",             // a continuation byte without a lead
    b"\xff",             // never in UTF-8
    b"\xc3",             // a two-byte sequence cut short
    b"\xe2\x82",         // a three-byte sequence cut short
    b"\xf0\x9f\xa6",     // a four-byte sequence cut short
    b"\xc0\x80",         // an overlong NUL
    b"\xed\xa0\x80",     // a UTF-16 surrogate
    b"\xf4\x90\x80\x80", // above U+10FFFF
    b"\xe0\x80\xaf",     // an overlong '/'
    b"\xfe\xfe",
];

/// Bytes written straight to disk, as a person or another program would.
#[derive(Clone, Debug)]
enum PlantIntent {
    /// Valid text at the aimed size (at hard cap + 1 or 2, already over its cap).
    Text(Aim),
    /// Valid text well over the hard cap.
    OverHard {
        extra: usize,
        seed: u64,
    },
    Invalid {
        at: InvalidAt,
        bad: usize,
        tail: bool,
        seed: u64,
    },
    Crlf {
        seed: u64,
    },
    Runs {
        seed: u64,
    },
    Empty,
    Remove,
}

fn entry_intent() -> impl Strategy<Value = EntryIntent> {
    prop_oneof![
        4 => aim().prop_map(EntryIntent::Sized),
        3 => (any::<u64>(), 1usize..=4).prop_map(|(seed, width)| EntryIntent::Short { seed, width }),
        2 => (any::<u64>(), 1usize..=4).prop_map(|(seed, width)| EntryIntent::Padded { seed, width }),
        2 => any::<u64>().prop_map(|seed| EntryIntent::Blank { seed }),
        1 => any::<u64>().prop_map(|seed| EntryIntent::LookAlike { seed }),
    ]
}

fn old_intent() -> impl Strategy<Value = OldIntent> {
    prop_oneof![
        8 => any::<u64>().prop_map(|seed| OldIntent::Unique { seed }),
        1 => Just(OldIntent::Whole),
        1 => any::<u64>().prop_map(|seed| OldIntent::Repeated { seed }),
        2 => any::<bool>().prop_map(|long| OldIntent::Overlap { long }),
        1 => Just(OldIntent::Absent),
        1 => Just(OldIntent::Empty),
    ]
}

fn new_intent() -> impl Strategy<Value = NewIntent> {
    prop_oneof![
        4 => aim().prop_map(NewIntent::Sized),
        3 => (any::<u64>(), 1usize..=4).prop_map(|(seed, width)| NewIntent::Short { seed, width }),
        1 => Just(NewIntent::Empty),
        1 => any::<u64>().prop_map(|seed| NewIntent::Spacey { seed }),
    ]
}

fn content_intent() -> impl Strategy<Value = ContentIntent> {
    prop_oneof![
        5 => aim().prop_map(ContentIntent::Sized),
        2 => (any::<u64>(), 1usize..=4)
            .prop_map(|(seed, width)| ContentIntent::Short { seed, width }),
        1 => Just(ContentIntent::Empty),
        1 => any::<u64>().prop_map(|seed| ContentIntent::Spacey { seed }),
        1 => any::<u64>().prop_map(|seed| ContentIntent::Crlf { seed }),
        1 => any::<u64>().prop_map(|seed| ContentIntent::Runs { seed }),
    ]
}

fn edit_intent() -> impl Strategy<Value = EditIntent> {
    prop_oneof![
        5 => entry_intent().prop_map(EditIntent::Add),
        4 => (old_intent(), new_intent()).prop_map(|(o, n)| EditIntent::Replace(o, n)),
        3 => content_intent().prop_map(EditIntent::Consolidate),
    ]
}

fn plant_intent() -> impl Strategy<Value = PlantIntent> {
    let at = prop_oneof![
        Just(InvalidAt::Start),
        (1usize..200).prop_map(InvalidAt::Early),
        aim().prop_map(InvalidAt::NearCap),
    ];
    prop_oneof![
        2 => aim().prop_map(PlantIntent::Text),
        1 => (0usize..600, any::<u64>()).prop_map(|(extra, seed)| PlantIntent::OverHard { extra, seed }),
        4 => (at, 0..BAD_SEQUENCES.len(), any::<bool>(), any::<u64>())
            .prop_map(|(at, bad, tail, seed)| PlantIntent::Invalid { at, bad, tail, seed }),
        1 => any::<u64>().prop_map(|seed| PlantIntent::Crlf { seed }),
        1 => any::<u64>().prop_map(|seed| PlantIntent::Runs { seed }),
        1 => Just(PlantIntent::Empty),
        1 => Just(PlantIntent::Remove),
    ]
}

fn resolve_entry(intent: &EntryIntent, file: MemoryFile, current: &[u8]) -> String {
    match *intent {
        EntryIntent::Sized(aim) => {
            // What add puts around the entry: a newline if the file lacks one, and one after.
            let separator = usize::from(current.last().is_some_and(|&b| b != b'\n'));
            let fixed = current.len() + separator + 1;
            let n = aim.target(file).saturating_sub(fixed).max(1);
            filler(&mut Rng(aim.seed), n, aim.width, INNER_SPACES)
        }
        EntryIntent::Short { seed, width } => {
            let mut rng = Rng(seed);
            let n = 1 + rng.below(40);
            filler(&mut rng, n, width, INNER_SPACES)
        }
        EntryIntent::Padded { seed, width } => {
            let mut rng = Rng(seed);
            let n = 1 + rng.below(30);
            blank(&mut rng, 1, 4)
                + &filler(&mut rng, n, width, INNER_SPACES)
                + &blank(&mut rng, 1, 4)
        }
        EntryIntent::Blank { seed } => blank(&mut Rng(seed), 0, 5),
        EntryIntent::LookAlike { seed } => {
            let mut rng = Rng(seed);
            let mut s = blank(&mut rng, 0, 2);
            let front = rng.percent(50);
            if front {
                s.push(*rng.pick(&LOOK_ALIKES));
            }
            let n = 1 + rng.below(20);
            s += &filler(&mut rng, n, 1, &[" "]);
            if !front || rng.percent(50) {
                s.push(*rng.pick(&LOOK_ALIKES));
            }
            s + &blank(&mut rng, 0, 2)
        }
    }
}

/// A piece of `text` starting at a random character, lengthened until it occurs once.
fn unique_piece(text: &str, seed: u64) -> String {
    let mut rng = Rng(seed);
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let chars = bounds.len() - 1;
    let start = rng.below(chars);
    let mut end = (start + 1 + rng.below(12)).min(chars);
    loop {
        let piece = &text[bounds[start]..bounds[end]];
        if end == chars || end - start >= 64 || occurrences(text, piece).len() == 1 {
            return piece.to_owned();
        }
        end += 1;
    }
}

fn resolve_old(intent: &OldIntent, text: Option<&str>) -> String {
    let text = text.filter(|t| !t.is_empty());
    match *intent {
        OldIntent::Unique { seed } => text.map_or("x".to_owned(), |t| unique_piece(t, seed)),
        OldIntent::Whole => text.unwrap_or("x").to_owned(),
        OldIntent::Repeated { seed } => {
            let chars: Vec<char> = text.unwrap_or("a").chars().collect();
            chars[Rng(seed).below(chars.len())].to_string()
        }
        OldIntent::Overlap { long } => if long { "aaa" } else { "aa" }.to_owned(),
        // U+2603 is in no generated text.
        OldIntent::Absent => "\u{2603}".to_owned(),
        OldIntent::Empty => String::new(),
    }
}

fn resolve_new(intent: &NewIntent, file: MemoryFile, current: usize, old: usize) -> String {
    match *intent {
        NewIntent::Sized(aim) => {
            let kept = current.saturating_sub(old);
            let n = aim.target(file).saturating_sub(kept);
            filler(&mut Rng(aim.seed), n, aim.width, INNER_SPACES)
        }
        NewIntent::Short { seed, width } => {
            let mut rng = Rng(seed);
            let n = rng.below(40);
            filler(&mut rng, n, width, INNER_SPACES)
        }
        NewIntent::Empty => String::new(),
        NewIntent::Spacey { seed } => {
            let mut rng = Rng(seed);
            let n = 1 + rng.below(10);
            blank(&mut rng, 1, 3) + &filler(&mut rng, n, 2, &[]) + &blank(&mut rng, 1, 3)
        }
    }
}

fn resolve_content(intent: &ContentIntent, file: MemoryFile) -> String {
    match *intent {
        ContentIntent::Sized(aim) => filler(
            &mut Rng(aim.seed),
            aim.target(file),
            aim.width,
            INNER_SPACES,
        ),
        ContentIntent::Short { seed, width } => {
            let mut rng = Rng(seed);
            let n = 1 + rng.below(60);
            filler(&mut rng, n, width, INNER_SPACES)
        }
        ContentIntent::Empty => String::new(),
        ContentIntent::Spacey { seed } => {
            let mut rng = Rng(seed);
            let n = 1 + rng.below(20);
            blank(&mut rng, 1, 3) + &filler(&mut rng, n, 3, INNER_SPACES) + &blank(&mut rng, 1, 3)
        }
        ContentIntent::Crlf { seed } => crlf_lines(&mut Rng(seed)),
        ContentIntent::Runs { seed } => runs(&mut Rng(seed)),
    }
}

fn resolve_edit(intent: &EditIntent, file: MemoryFile, model: &Model) -> Edit {
    let current = model.get(file).unwrap_or_default();
    match intent {
        EditIntent::Add(entry) => Edit::Add(resolve_entry(entry, file, current)),
        EditIntent::Replace(old, new) => {
            let old = resolve_old(old, text_of(model.get(file)).ok());
            let new = resolve_new(new, file, current.len(), old.len());
            Edit::Replace(old, new)
        }
        EditIntent::Consolidate(content) => Edit::Consolidate(resolve_content(content, file)),
    }
}

/// The bytes a plant leaves (`None`: the file is removed).
fn resolve_plant(intent: &PlantIntent, file: MemoryFile) -> Option<Vec<u8>> {
    let text = |seed: u64, n: usize, width: usize| {
        filler(&mut Rng(seed), n, width, INNER_SPACES).into_bytes()
    };
    Some(match intent {
        PlantIntent::Text(aim) => text(aim.seed, aim.target(file), aim.width),
        PlantIntent::OverHard { extra, seed } => text(*seed, hard_cap(file) + 1 + extra, 2),
        PlantIntent::Invalid {
            at,
            bad,
            tail,
            seed,
        } => {
            let (prefix, width) = match at {
                InvalidAt::Start => (0, 1),
                InvalidAt::Early(n) => (*n, 2),
                InvalidAt::NearCap(aim) => (aim.target(file), aim.width),
            };
            let mut bytes = text(*seed, prefix, width);
            bytes.extend_from_slice(BAD_SEQUENCES[bad % BAD_SEQUENCES.len()]);
            if *tail {
                bytes.extend(text(seed ^ 1, 1 + (*seed % 30) as usize, 3));
            }
            bytes
        }
        PlantIntent::Crlf { seed } => crlf_lines(&mut Rng(*seed)).into_bytes(),
        PlantIntent::Runs { seed } => runs(&mut Rng(*seed)).into_bytes(),
        PlantIntent::Empty => Vec::new(),
        PlantIntent::Remove => return None,
    })
}

/// Puts a plant on disk behind the component's back.
fn plant(t: &TestWorkspace, file: MemoryFile, bytes: Option<&[u8]>) {
    match bytes {
        Some(bytes) => t.put(file, bytes),
        None => match std::fs::remove_file(t.path(file)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{e}"),
            _ => {}
        },
    }
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
// Store operations.

#[derive(Clone, Debug)]
enum Step {
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

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => (file(), edit_intent()).prop_map(|(f, e)| Step::Edit(f, e)),
        3 => (file(), plant_intent()).prop_map(|(f, p)| Step::Plant(f, p)),
        2 => file().prop_map(Step::Read),
        1 => (0..BASES.len()).prop_map(Step::Prompt),
    ]
}

#[derive(Default)]
struct StoreFigures {
    cases: u64,
    steps: u64,
    writes: u64,
    written: u64,
    boundary_steps: u64,
    boundary_cases: u64,
    at_hard: u64,
    over_hard: u64,
    at_soft: u64,
    over_soft: u64,
    stripped: u64,
    not_unique: u64,
    overlaps: u64,
    blank_on_invalid: u64,
    plants: u64,
    invalid_plants: u64,
    over_cap_plants: u64,
    invalid_refusals: u64,
    consolidated_invalid: u64,
    reads: u64,
    prompts: u64,
}

fn store_case(
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

// ---------------------------------------------------------------------------------------
// Tool calls: generated as members rendered to JSON text here, so the validity model
// decides from the members (duplicates included) and never re-parses.

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

const SHAPES: [&str; 10] = [
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
struct CallIntent {
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

/// CONTRACT §5's schemas (and the README's choice of refusing a property given twice),
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
enum ToolStep {
    Call(CallIntent),
    Plant(MemoryFile, PlantIntent),
}

fn tool_step() -> impl Strategy<Value = ToolStep> {
    prop_oneof![
        10 => call_intent().prop_map(ToolStep::Call),
        1 => (file(), plant_intent()).prop_map(|(f, p)| ToolStep::Plant(f, p)),
    ]
}

#[derive(Default)]
struct ToolFigures {
    cases: u64,
    calls: u64,
    valid: u64,
    written: u64,
    store_refusals: u64,
    invalid_utf8_refusals: u64,
    hints: [u64; 3],
    shapes: [u64; 10],
    escaped: u64,
    boundary_calls: u64,
    boundary_cases: u64,
    plants: u64,
    invalid_plants: u64,
}

const OFF: ScanPolicy = ScanPolicy {
    invisible_characters: false,
    injection_patterns: false,
};

fn tool_case(
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
        let outcome = t.ws.call_tool_with_policy(&call.name, &call.text, OFF);
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

// ---------------------------------------------------------------------------------------
// Scanned tool calls: benign texts, sometimes a hostile one, under the three policies.

struct Corpus {
    benign: Vec<String>,
    /// (rule id, text)
    hostile: Vec<(String, String)>,
}

static CORPUS: LazyLock<Corpus> = LazyLock::new(|| {
    let load = |name: &str| -> Vec<Value> {
        let path = format!(
            "{}/../tests/poisoning/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let suite: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        suite["texts"].as_array().unwrap().clone()
    };
    Corpus {
        benign: load("benign")
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect(),
        hostile: load("hostile")
            .iter()
            .map(|c| {
                let (id, text) = (c["id"].as_str().unwrap(), c["text"].as_str().unwrap());
                (id.to_owned(), text.to_owned())
            })
            .collect(),
    }
});

/// The rules of the scan's invisible-characters part (README "Memory poisoning"); every
/// other rule belongs to its injection-patterns part.
const CHARACTER_RULES: [&str; 5] = [
    "control-character",
    "hidden-format-character",
    "hidden-tag-character",
    "private-use-character",
    "unassigned-character",
];

fn is_character_rule(id: &str) -> bool {
    CHARACTER_RULES.contains(&id)
}

/// Whether `policy` runs the part of the scan that `id` belongs to.
fn runs_rule(policy: ScanPolicy, id: &str) -> bool {
    if is_character_rule(id) {
        policy.invisible_characters
    } else {
        policy.injection_patterns
    }
}

/// The rule a scan refusal names, if `message` is one (README "Memory poisoning").
fn scan_rule(message: &str, file: MemoryFile) -> Option<String> {
    let prefix = format!(
        "{} write refused by the memory poisoning scan [",
        name(file)
    );
    let rest = message.strip_prefix(&prefix)?;
    let end = rest.find(']')?;
    message
        .ends_with("; nothing was written")
        .then(|| rest[..end].to_owned())
}

#[derive(Clone, Copy, Debug)]
enum Pick {
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
enum ScanStep {
    Add(MemoryFile, Pick),
    /// Replace one corpus text the file holds (the n-th found) with another.
    Replace(MemoryFile, usize, Pick),
    Consolidate(MemoryFile, Vec<Pick>),
    /// Consolidate to the aimed size: benign texts, then filler.
    Pad(MemoryFile, Aim),
    /// A person adds a hostile text through the store interface, which is not scanned.
    Person(MemoryFile, usize),
}

fn scan_step() -> impl Strategy<Value = ScanStep> {
    prop_oneof![
        5 => (file(), pick()).prop_map(|(f, p)| ScanStep::Add(f, p)),
        2 => (file(), any::<usize>(), pick()).prop_map(|(f, i, p)| ScanStep::Replace(f, i, p)),
        2 => (file(), prop::collection::vec(pick(), 0..4)).prop_map(|(f, p)| ScanStep::Consolidate(f, p)),
        1 => (file(), aim()).prop_map(|(f, a)| ScanStep::Pad(f, a)),
        1 => (file(), any::<usize>()).prop_map(|(f, h)| ScanStep::Person(f, h)),
    ]
}

const INJECTION_ONLY: ScanPolicy = ScanPolicy {
    invisible_characters: false,
    injection_patterns: true,
};

const CHARACTERS_ONLY: ScanPolicy = ScanPolicy {
    invisible_characters: true,
    injection_patterns: false,
};

fn policy() -> impl Strategy<Value = ScanPolicy> {
    prop_oneof![
        2 => Just(ScanPolicy::default()),
        1 => Just(INJECTION_ONLY),
        1 => Just(CHARACTERS_ONLY),
    ]
}

fn policy_name(policy: ScanPolicy) -> &'static str {
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
struct ScanFigures {
    cases: u64,
    calls: u64,
    policies: [u64; 3],
    written: u64,
    hostile_refused: u64,
    refused_by_policy: [u64; 3],
    let_through: u64,
    other_rule: u64,
    phrase: u64,
    store_refusals: u64,
    over_soft: u64,
    person: u64,
    samples: Vec<String>,
}

fn policy_index(policy: ScanPolicy) -> usize {
    match policy_name(policy) {
        "default" => 0,
        "injection-only" => 1,
        _ => 2,
    }
}

fn scan_case(
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
        let outcome =
            t.ws.call_tool_with_policy(input.0, &input.1.to_string(), policy);
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
                if !characters.is_empty() {
                    // The characters part runs first, over the whole text: one of the
                    // hidden characters present must be what it names.
                    prop_assert!(
                        characters.contains(&rule.as_str()),
                        "{}: {}",
                        described,
                        error.message
                    );
                    fig.hostile_refused += 1;
                    fig.refused_by_policy[policy_index(policy)] += 1;
                } else {
                    // Benign texts hold no hidden characters: only a pattern can be left.
                    prop_assert!(
                        !is_character_rule(&rule),
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
    for (id, text) in &CORPUS.hostile {
        for policy in [ScanPolicy::default(), INJECTION_ONLY, CHARACTERS_ONLY] {
            t.put(MemoryFile::User, "kept\n");
            let input = json!({"file": "USER.md", "content": text}).to_string();
            let outcome =
                t.ws.call_tool_with_policy("memory_consolidate", &input, policy);
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
                let success = outcome.unwrap_or_else(|e| panic!("{context}: {e}"));
                assert_eq!(
                    t.bytes(MemoryFile::User).unwrap(),
                    text.as_bytes(),
                    "{context}"
                );
                assert_eq!(success.result.after_size_bytes, text.len() as u64);
                written += 1;
            }
        }
    }
    eprintln!(
        "hostile texts under each policy: {} cases, {refused} refused naming their rule, {written} written by the policy that does not look for them",
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
