//! Generators: intentions, resolved against the model's state when the step runs.

use metis_memory::MemoryFile;
use proptest::prelude::*;

use super::model::{Edit, Model, STRIP_SET, hard_cap, occurrences, soft_cap, text_of};
use crate::common::TestWorkspace;

/// splitmix64, for the choices that depend on the state at run time: seeded by proptest,
/// so a failing case replays and shrinks.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub(crate) fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
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
pub(crate) const SCAN_SAFE_SPACES: &[&str] = &[" ", " ", "\n"];

/// Characters that look blank but are not in the strip set: an entry keeps them.
const LOOK_ALIKES: [char; 7] = [
    '\u{200B}', '\u{180E}', '\u{FEFF}', '\u{2060}', '\u{1}', '\u{7F}', '\u{AD}',
];

/// Exactly `n` bytes of varied text, mostly in `width`-byte characters, with `spaces`
/// only inside (never first or last, so stripping leaves it whole) and a few runs of `a`.
pub(crate) fn filler(rng: &mut Rng, n: usize, width: usize, spaces: &[&str]) -> String {
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
pub(crate) struct Aim {
    cap: Cap,
    delta: i64,
    pub(crate) width: usize,
    pub(crate) seed: u64,
}

impl Aim {
    pub(crate) fn target(self, file: MemoryFile) -> usize {
        let cap = match self.cap {
            Cap::Soft => soft_cap(file),
            Cap::Hard => hard_cap(file),
        };
        (cap as i64 + self.delta) as usize
    }
}

pub(crate) fn aim() -> impl Strategy<Value = Aim> {
    (any::<bool>(), -2i64..=2, 1usize..=4, any::<u64>()).prop_map(|(hard, delta, width, seed)| {
        Aim {
            cap: if hard { Cap::Hard } else { Cap::Soft },
            delta,
            width,
            seed,
        }
    })
}

pub(crate) fn file() -> impl Strategy<Value = MemoryFile> {
    prop_oneof![Just(MemoryFile::Memory), Just(MemoryFile::User)]
}

#[derive(Clone, Debug)]
pub(crate) enum EntryIntent {
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
pub(crate) enum OldIntent {
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
pub(crate) enum NewIntent {
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
pub(crate) enum ContentIntent {
    Sized(Aim),
    Short { seed: u64, width: usize },
    Empty,
    Spacey { seed: u64 },
    Crlf { seed: u64 },
    Runs { seed: u64 },
}

#[derive(Clone, Debug)]
pub(crate) enum EditIntent {
    Add(EntryIntent),
    Replace(OldIntent, NewIntent),
    Consolidate(ContentIntent),
}

/// Where a plant puts its invalid bytes.
#[derive(Clone, Debug)]
pub(crate) enum InvalidAt {
    Start,
    Early(usize),
    NearCap(Aim),
}

/// Bytes that are not UTF-8.
pub(crate) const BAD_SEQUENCES: [&[u8]; 10] = [
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
pub(crate) enum PlantIntent {
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

pub(crate) fn edit_intent() -> impl Strategy<Value = EditIntent> {
    prop_oneof![
        5 => entry_intent().prop_map(EditIntent::Add),
        4 => (old_intent(), new_intent()).prop_map(|(o, n)| EditIntent::Replace(o, n)),
        3 => content_intent().prop_map(EditIntent::Consolidate),
    ]
}

pub(crate) fn plant_intent() -> impl Strategy<Value = PlantIntent> {
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

pub(crate) fn resolve_edit(intent: &EditIntent, file: MemoryFile, model: &Model) -> Edit {
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
pub(crate) fn resolve_plant(intent: &PlantIntent, file: MemoryFile) -> Option<Vec<u8>> {
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
pub(crate) fn plant(t: &TestWorkspace, file: MemoryFile, bytes: Option<&[u8]>) {
    match bytes {
        Some(bytes) => t.put(file, bytes),
        None => match std::fs::remove_file(t.path(file)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{e}"),
            _ => {}
        },
    }
}
