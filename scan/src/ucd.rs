//! The Unicode data the scan needs (NFKC, canonical combining classes, the few general
//! categories and emoji properties it asks about, lowercase) in compact tables of its own.
//!
//! The scan used the `unicode-normalization` and `unicode-properties` crates, whose
//! tables (perfect hashes of 8-byte entries, one range entry per general category run)
//! were about 150 KB of the component's 467 KB. `ucd_tables.rs` holds the same data as
//! sorted runs: a code point range and one value for the whole run. The crates are now
//! only dev-dependencies: `tables_are_the_crates` regenerates the tables from them and
//! fails if the file differs (`METIS_WRITE_UCD=1` rewrites it), and the tests below check
//! NFKC and every property against the crates for every code point. Lowercase is the
//! standard library's `char::to_lowercase` as runs, checked against it the same way.

use alloc::vec::Vec;

use crate::sort::sort;

use super::ucd_tables::{
    CATEGORY_PLANES, CATEGORY_STARTS, CATEGORY_VALUES, COMBINING_CLASS_PLANES,
    COMBINING_CLASS_STARTS, COMBINING_CLASS_VALUES, COMPOSE_KEYS, COMPOSE_SECONDS, COMPOSE_VALUES,
    DECOMPOSE_PLANES, DECOMPOSE_POOL, DECOMPOSE_STARTS, DECOMPOSE_VALUES, EMOJI_PLANES,
    EMOJI_STARTS, EMOJI_VALUES, LOWERCASE_DELTAS, LOWERCASE_RUNS,
};

/// The general categories the scan tells apart; every other one is `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Category {
    Other = 0,
    /// `Mn`, `Mc` or `Me`.
    Mark = 1,
    /// `Cc`.
    Control = 2,
    /// `Cf`.
    Format = 3,
    /// `Co`.
    PrivateUse = 4,
    /// `Cn`.
    Unassigned = 5,
}

const CATEGORIES: [Category; 6] = [
    Category::Other,
    Category::Mark,
    Category::Control,
    Category::Format,
    Category::PrivateUse,
    Category::Unassigned,
];

/// The value of the run holding `c`, runs kept by plane: those of plane `p` are
/// `planes[p]..planes[p + 1]` of `starts` (the low 16 bits of each run's first code
/// point, three bytes a run with its value where a whole code point and value took
/// four) and `values`. Each plane's first run starts at its first code point, so no
/// run is looked for in the plane before.
fn run_value(planes: &[u16], starts: &[u16], values: &[u8], c: char) -> u8 {
    plane_run(planes, starts, c as u32).map_or(0, |i| values[i])
}

/// The index in `starts` of the run holding `code`, runs kept by plane as `run_value`
/// says; `None` if no run of its plane starts at or before it.
fn plane_run(planes: &[u16], starts: &[u16], code: u32) -> Option<usize> {
    let plane = (code >> 16) as usize;
    let (from, to) = (*planes.get(plane)?, *planes.get(plane + 1)?);
    let (from, to) = (usize::from(from), usize::from(to));
    let low = (code & 0xFFFF) as u16;
    let at = starts[from..to].partition_point(|&start| start <= low);
    at.checked_sub(1).map(|i| from + i)
}

/// The bytes these tables take.
pub(super) fn table_bytes() -> usize {
    let tables: [&[u32]; 4] = [
        COMPOSE_SECONDS,
        COMPOSE_KEYS,
        COMPOSE_VALUES,
        LOWERCASE_RUNS,
    ];
    let plane_runs: [(&[u16], &[u16], &[u8]); 3] = [
        (CATEGORY_PLANES, CATEGORY_STARTS, CATEGORY_VALUES),
        (
            COMBINING_CLASS_PLANES,
            COMBINING_CLASS_STARTS,
            COMBINING_CLASS_VALUES,
        ),
        (EMOJI_PLANES, EMOJI_STARTS, EMOJI_VALUES),
    ];
    tables.iter().map(|t| size_of_val(*t)).sum::<usize>()
        + plane_runs
            .iter()
            .map(|(p, s, v)| size_of_val(*p) + size_of_val(*s) + size_of_val(*v))
            .sum::<usize>()
        + size_of_val(LOWERCASE_DELTAS)
        + size_of_val(DECOMPOSE_PLANES)
        + size_of_val(DECOMPOSE_STARTS)
        + size_of_val(DECOMPOSE_VALUES)
        + DECOMPOSE_POOL.len()
}

pub(crate) fn category(c: char) -> Category {
    let value = run_value(CATEGORY_PLANES, CATEGORY_STARTS, CATEGORY_VALUES, c);
    CATEGORIES[usize::from(value)]
}

pub fn is_format(c: char) -> bool {
    category(c) == Category::Format
}

pub(crate) fn is_mark(c: char) -> bool {
    category(c) == Category::Mark
}

pub(crate) fn canonical_combining_class(c: char) -> u8 {
    run_value(
        COMBINING_CLASS_PLANES,
        COMBINING_CLASS_STARTS,
        COMBINING_CLASS_VALUES,
        c,
    )
}

// An emoji run's value: bit 0 for `Emoji`, bit 1 for `Emoji` or `Emoji_Component`.
const EMOJI: u8 = 1;
const IN_EMOJI_SEQUENCES: u8 = 2;

/// The `Emoji` property.
pub(crate) fn is_emoji(c: char) -> bool {
    run_value(EMOJI_PLANES, EMOJI_STARTS, EMOJI_VALUES, c) & EMOJI != 0
}

/// `Emoji` or `Emoji_Component`: whether `c` occurs in emoji sequences.
pub(crate) fn in_emoji_sequences(c: char) -> bool {
    run_value(EMOJI_PLANES, EMOJI_STARTS, EMOJI_VALUES, c) & IN_EMOJI_SEQUENCES != 0
}

/// The one character whose lowercase is two: `İ` is `i` and a combining dot above.
const CAPITAL_I_WITH_DOT: char = '\u{130}';

/// `char::to_lowercase`, from runs of the characters it maps rather than the standard
/// library's table of every one (8 bytes a character, 11 KB in the component): each run
/// is a start above 7 bits of its length less one and a bit for every other character
/// (the Latin and Cyrillic pairs), with the distance to the lowercase of each in
/// `LOWERCASE_DELTAS`. `lowercase_is_the_standard_librarys` checks every code point.
pub(crate) fn to_lowercase(c: char) -> impl Iterator<Item = char> {
    let (first, second) = if c.is_ascii() {
        (c.to_ascii_lowercase(), None)
    } else if c == CAPITAL_I_WITH_DOT {
        ('i', Some('\u{307}'))
    } else {
        (lowercase_one(c), None)
    };
    core::iter::once(first).chain(second)
}

/// The lowercase of `c` if it is one character other than `c`.
pub(crate) fn other_lowercase(c: char) -> Option<char> {
    let mut lower = to_lowercase(c);
    match (lower.next(), lower.next()) {
        (Some(l), None) if l != c => Some(l),
        _ => None,
    }
}

fn lowercase_one(c: char) -> char {
    let code = c as u32;
    let at = LOWERCASE_RUNS.partition_point(|&run| run >> 8 <= code);
    let Some(i) = at.checked_sub(1) else {
        return c;
    };
    let run = LOWERCASE_RUNS[i];
    let (offset, every_other) = (code - (run >> 8), run & 1 != 0);
    let len = (run >> 1 & 0x7F) + 1;
    let index = if every_other {
        offset.is_multiple_of(2).then_some(offset / 2)
    } else {
        Some(offset)
    };
    match index {
        Some(index) if index < len => from_u32(code.wrapping_add_signed(LOWERCASE_DELTAS[i])),
        _ => c,
    }
}

// Hangul syllables decompose and compose by arithmetic, not by table (Unicode §3.12).
const S_BASE: u32 = 0xAC00;
const L_BASE: u32 = 0x1100;
const V_BASE: u32 = 0x1161;
const T_BASE: u32 = 0x11A7;
const L_COUNT: u32 = 19;
const V_COUNT: u32 = 21;
const T_COUNT: u32 = 28;
const N_COUNT: u32 = V_COUNT * T_COUNT;
const S_COUNT: u32 = L_COUNT * N_COUNT;

fn from_u32(c: u32) -> char {
    char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The full compatibility decomposition of `c`, each character passed to `emit`.
pub(crate) fn decompose(c: char, emit: &mut impl FnMut(char)) {
    let code = c as u32;
    if (S_BASE..S_BASE + S_COUNT).contains(&code) {
        let s = code - S_BASE;
        emit(from_u32(L_BASE + s / N_COUNT));
        emit(from_u32(V_BASE + (s % N_COUNT) / T_COUNT));
        if !s.is_multiple_of(T_COUNT) {
            emit(from_u32(T_BASE + s % T_COUNT));
        }
        return;
    }
    // Runs of code points that decompose, by plane: the runs of plane `p` are
    // `DECOMPOSE_PLANES[p]..DECOMPOSE_PLANES[p + 1]`, each start the low 16 bits of its
    // first code point (half the bytes of a whole one, and no run crosses a plane). A
    // value is three bytes, little-endian: either the first character of a run of
    // consecutive ones (bits 0 to 17) with the run's length less one (bits 18 to 22), or
    // (bit 23 set) where one decomposition of several characters lies in the pool (bits
    // 6 to 21 its offset, 0 to 5 its length), for a run of one.
    let low = (code & 0xFFFF) as u16;
    if let Some(i) = plane_run(DECOMPOSE_PLANES, DECOMPOSE_STARTS, code) {
        let [low_byte, middle, high] = DECOMPOSE_VALUES[i];
        let value = u32::from(low_byte) | u32::from(middle) << 8 | u32::from(high) << 16;
        let pooled = value & 1 << 23 != 0;
        let last = if pooled { 0 } else { (value >> 18) & 0x1F };
        let offset = u32::from(low - DECOMPOSE_STARTS[i]);
        if offset <= last {
            if !pooled {
                emit(from_u32((value & 0x3_FFFF) + offset));
            } else {
                let from = ((value >> 6) & 0xFFFF) as usize;
                let to = from + (value & 0x3F) as usize;
                DECOMPOSE_POOL
                    .get(from..to)
                    .into_iter()
                    .flat_map(str::chars)
                    .for_each(emit);
            }
            return;
        }
    }
    emit(c);
}

/// The primary composite of `a` followed by `b`, if there is one.
fn compose(a: char, b: char) -> Option<char> {
    let (a, b) = (a as u32, b as u32);
    if (L_BASE..L_BASE + L_COUNT).contains(&a) && (V_BASE..V_BASE + V_COUNT).contains(&b) {
        return char::from_u32(S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT);
    }
    if (S_BASE..S_BASE + S_COUNT).contains(&a)
        && (a - S_BASE).is_multiple_of(T_COUNT)
        && (T_BASE + 1..T_BASE + T_COUNT).contains(&b)
    {
        return char::from_u32(a + (b - T_BASE));
    }
    let second = COMPOSE_SECONDS.binary_search(&b).ok()? as u32;
    let key = second << 21 | a;
    let at = COMPOSE_KEYS.binary_search(&key).ok()?;
    char::from_u32(COMPOSE_VALUES[at])
}

fn is_composition_second(c: char) -> bool {
    let code = c as u32;
    (V_BASE..V_BASE + V_COUNT).contains(&code)
        || (T_BASE + 1..T_BASE + T_COUNT).contains(&code)
        || COMPOSE_SECONDS.binary_search(&code).is_ok()
}

/// Whether `text` is certainly its own NFKC form: no character decomposes, none is a
/// combining mark, none can compose with the one before. (Some NFKC texts fail it, such
/// as precomposed letters; they are then normalised to themselves.)
pub(crate) fn is_nfkc_quick(text: &str) -> bool {
    text.chars().all(|c| {
        c.is_ascii()
            || (canonical_combining_class(c) == 0 && !is_composition_second(c) && {
                let mut same = true;
                decompose(c, &mut |d| same &= d == c);
                same
            })
    })
}

/// The NFKC form of `text`: full compatibility decomposition, canonical ordering, then
/// canonical composition (Unicode §3.11, UAX #15).
pub(crate) fn nfkc(text: &str) -> Vec<char> {
    let mut chars: Vec<(char, u8)> = Vec::with_capacity(text.len());
    for c in text.chars() {
        decompose(c, &mut |d| chars.push((d, canonical_combining_class(d))));
    }
    // Canonical ordering: each run of combining marks, stably by class.
    let mut i = 0;
    let mut run: Vec<(u8, usize, char)> = Vec::new();
    while i < chars.len() {
        let len = chars[i..]
            .iter()
            .take_while(|&&(_, class)| class != 0)
            .count();
        if len > 1 {
            run.clear();
            run.extend(
                chars[i..i + len]
                    .iter()
                    .enumerate()
                    .map(|(j, &(c, class))| (class, j, c)),
            );
            sort(&mut run);
            for (slot, &(class, _, c)) in chars[i..i + len].iter_mut().zip(&run) {
                *slot = (c, class);
            }
        }
        i += len.max(1);
    }
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    // The last starter's place in `out`, and the class of the last character kept after
    // it (0 while that is the starter itself; 256 when the text opens with a mark).
    let mut starter: Option<usize> = None;
    let mut last_class: u16 = 256;
    for (c, class) in chars {
        let class = u16::from(class);
        if let Some(at) = starter
            && (last_class < class || last_class == 0)
            && let Some(composite) = compose(out[at], c)
        {
            out[at] = composite;
            continue;
        }
        if class == 0 {
            starter = Some(out.len());
        }
        last_class = class;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;
    use std::prelude::rust_2024::*;
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char as crate_char;
    use unicode_properties::{GeneralCategory, UnicodeEmoji, UnicodeGeneralCategory};

    fn all_chars() -> impl Iterator<Item = char> {
        (0..=0x10FFFF).filter_map(char::from_u32)
    }

    fn crate_category(c: char) -> Category {
        match c.general_category() {
            GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark => Category::Mark,
            GeneralCategory::Control => Category::Control,
            GeneralCategory::Format => Category::Format,
            GeneralCategory::PrivateUse => Category::PrivateUse,
            GeneralCategory::Unassigned => Category::Unassigned,
            _ => Category::Other,
        }
    }

    /// Runs of equal values over every code point, as `start << bits | value`.
    fn runs(bits: u32, value: impl Fn(char) -> u32) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        let mut last = None;
        for c in all_chars() {
            let v = value(c);
            assert!(v < 1 << bits);
            if last != Some(v) {
                out.push((c as u32) << bits | v);
                last = Some(v);
            }
        }
        out
    }

    fn crate_decomposition(c: char) -> Vec<char> {
        let mut out = Vec::new();
        crate_char::decompose_compatible(c, |d| out.push(d));
        out
    }

    fn is_hangul_syllable(c: char) -> bool {
        (S_BASE..S_BASE + S_COUNT).contains(&(c as u32))
    }

    /// Decomposition runs (`start << 11 | length - 1`), values and the pool of longer
    /// decompositions.
    fn decompositions() -> (Vec<u32>, Vec<u32>, String) {
        let (mut keys, mut values, mut pool) = (Vec::new(), Vec::new(), String::new());
        // The run being built: first code point, length, first character.
        let mut run: Option<(u32, u32, u32)> = None;
        let flush =
            |run: &mut Option<(u32, u32, u32)>, keys: &mut Vec<u32>, values: &mut Vec<u32>| {
                if let Some((start, len, first)) = run.take() {
                    keys.push(start << 11 | (len - 1));
                    values.push(first);
                }
            };
        for c in all_chars().filter(|c| !is_hangul_syllable(*c)) {
            let d = crate_decomposition(c);
            let code = c as u32;
            if d == [c] {
                flush(&mut run, &mut keys, &mut values);
                continue;
            }
            if let [one] = d[..] {
                if let Some((start, len, first)) = run
                    && start + len == code
                    && first + len == one as u32
                    && len < 0x800
                {
                    run = Some((start, len + 1, first));
                    continue;
                }
                flush(&mut run, &mut keys, &mut values);
                run = Some((code, 1, one as u32));
                continue;
            }
            flush(&mut run, &mut keys, &mut values);
            let text: String = d.iter().collect();
            let offset = pool.find(&text).unwrap_or_else(|| {
                pool.push_str(&text);
                pool.len() - text.len()
            });
            assert!(offset < 1 << 16 && text.len() < 1 << 8);
            keys.push(code << 11);
            values.push(1 << 31 | (offset as u32) << 8 | text.len() as u32);
        }
        flush(&mut run, &mut keys, &mut values);
        (keys, values, pool)
    }

    /// Every primary composite: the pair its canonical decomposition splits into, found
    /// from the decomposition and confirmed by the crate's `compose`.
    fn compositions() -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let mut pairs: Vec<(char, char, char)> = Vec::new();
        for c in all_chars().filter(|c| !is_hangul_syllable(*c)) {
            let mut d = Vec::new();
            crate_char::decompose_canonical(c, |x| d.push(x));
            let Some((&b, prefix)) = d.split_last() else {
                continue;
            };
            let prefix: String = prefix.iter().collect();
            let mut firsts = prefix.nfc();
            if let (Some(a), None) = (firsts.next(), firsts.next())
                && crate_char::compose(a, b) == Some(c)
            {
                pairs.push((a, b, c));
            }
        }
        let mut seconds: Vec<u32> = pairs.iter().map(|&(_, b, _)| b as u32).collect();
        seconds.sort_unstable();
        seconds.dedup();
        assert!(seconds.len() < 1 << 11);
        let mut keyed: Vec<(u32, u32)> = pairs
            .iter()
            .map(|&(a, b, c)| {
                let second = seconds.binary_search(&(b as u32)).unwrap() as u32;
                (second << 21 | a as u32, c as u32)
            })
            .collect();
        keyed.sort_unstable();
        let (keys, values) = keyed.into_iter().unzip();
        (seconds, keys, values)
    }

    /// The runs of `decompositions` as `decompose` reads them: where each plane's runs
    /// begin (and the last ends), the low 16 bits of each run's start, and each value in
    /// 24 bits (a run of more than 32 split into runs of 32 and the rest).
    fn decomposition_tables(keys: &[u32], values: &[u32]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let mut planes = std::vec![0];
        let (mut starts, mut packed) = (Vec::new(), Vec::new());
        for (&key, &value) in keys.iter().zip(values) {
            let (start, len) = (key >> 11, (key & 0x7FF) + 1);
            let plane = start >> 16;
            assert_eq!((start + len - 1) >> 16, plane, "a run crosses a plane");
            while planes.len() <= plane as usize + 1 {
                planes.push(starts.len() as u32);
            }
            if value & 1 << 31 == 0 {
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(32);
                    assert!(value + done + n <= 1 << 18);
                    starts.push((start + done) & 0xFFFF);
                    packed.push((n - 1) << 18 | (value + done));
                    done += n;
                }
            } else {
                let (offset, bytes) = ((value >> 8) & 0xFFFF, value & 0xFF);
                assert!(len == 1 && bytes < 1 << 6);
                starts.push(start & 0xFFFF);
                packed.push(1 << 23 | offset << 6 | bytes);
            }
            *planes.last_mut().unwrap() = starts.len() as u32;
        }
        assert!(starts.len() < 1 << 16);
        (planes, starts, packed)
    }

    /// The runs of characters whose lowercase (`char::to_lowercase`) is one other
    /// character at the same distance, consecutive or every other one, as `start << 8 |
    /// (length - 1) << 1 | every other`, and each run's distance.
    fn lowercase_runs() -> (Vec<u32>, Vec<i32>) {
        let mut runs: Vec<(u32, u32, bool, i32)> = Vec::new();
        for c in all_chars().filter(|&c| c != CAPITAL_I_WITH_DOT) {
            let lower: Vec<char> = c.to_lowercase().collect();
            assert_eq!(lower.len(), 1, "{c:?}");
            let code = c as u32;
            let delta = lower[0] as i32 - code as i32;
            if delta == 0 {
                continue;
            }
            if let Some((start, len, every_other, d)) = runs.last_mut()
                && *d == delta
                && *len < 0x80
            {
                let step = if *every_other { 2 } else { 1 };
                if *start + *len * step == code {
                    *len += 1;
                    continue;
                }
                if *len == 1 && *start + 2 == code {
                    (*len, *every_other) = (2, true);
                    continue;
                }
            }
            runs.push((code, 1, false, delta));
        }
        runs.iter()
            .map(|&(start, len, every_other, delta)| {
                (start << 8 | (len - 1) << 1 | u32::from(every_other), delta)
            })
            .unzip()
    }

    /// `runs` (as `runs` makes them) as `run_value` reads them, the tables `{name}_PLANES`,
    /// `{name}_STARTS` and `{name}_VALUES`: by plane, each plane opening with a run at its
    /// first code point.
    fn plane_tables(out: &mut String, bytes: &mut usize, name: &str, bits: u32, runs: &[u32]) {
        let value_at = |code: u32| {
            let at = runs.partition_point(|&run| run >> bits <= code);
            runs[at - 1] & ((1 << bits) - 1)
        };
        let (mut planes, mut starts, mut values) = (Vec::new(), Vec::new(), Vec::new());
        for plane in 0..=0x10 {
            let base = plane << 16;
            planes.push(starts.len() as u32);
            starts.push(0);
            values.push(value_at(base));
            for &run in runs {
                let start = run >> bits;
                if start > base && start < base + 0x10000 {
                    starts.push(start & 0xFFFF);
                    values.push(run & ((1 << bits) - 1));
                }
            }
        }
        planes.push(starts.len() as u32);
        typed_table(out, bytes, &format!("{name}_PLANES"), "u16", 2, &planes);
        typed_table(out, bytes, &format!("{name}_STARTS"), "u16", 2, &starts);
        typed_table(out, bytes, &format!("{name}_VALUES"), "u8", 1, &values);
    }

    /// `values` as the table `name` onto `out`, and its bytes onto `bytes`.
    fn table(out: &mut String, bytes: &mut usize, name: &str, values: &[u32]) {
        typed_table(out, bytes, name, "u32", 4, values);
    }

    /// `values` as a table of `ty`, `size` bytes each.
    fn typed_table(
        out: &mut String,
        bytes: &mut usize,
        name: &str,
        ty: &str,
        size: usize,
        values: &[u32],
    ) {
        assert!(values.iter().all(|&v| u64::from(v) < 1 << (size * 8)));
        *bytes += size * values.len();
        writeln!(out, "pub(super) const {name}: &[{ty}] = &[").unwrap();
        for line in values.chunks(10) {
            let line: Vec<String> = line.iter().map(|v| format!("0x{v:X}")).collect();
            writeln!(out, "    {},", line.join(", ")).unwrap();
        }
        writeln!(out, "];").unwrap();
    }

    /// The tables' source, and the bytes of their data.
    fn generated() -> (String, usize) {
        let mut bytes = 0;
        let mut out = String::from(
            "//! Generated by `ucd.rs`'s `tables_are_the_crates` from the `unicode-normalization`\n\
             //! and `unicode-properties` crates and the standard library's `char::to_lowercase`\n\
             //! (`METIS_WRITE_UCD=1` rewrites it): do not edit.\n\n",
        );
        let category = runs(3, |c| crate_category(c) as u32);
        plane_tables(&mut out, &mut bytes, "CATEGORY", 3, &category);
        let classes = runs(8, |c| u32::from(crate_char::canonical_combining_class(c)));
        plane_tables(&mut out, &mut bytes, "COMBINING_CLASS", 8, &classes);
        let emoji = runs(2, |c| {
            u32::from(c.is_emoji_char()) * u32::from(EMOJI)
                + u32::from(c.is_emoji_char_or_emoji_component()) * u32::from(IN_EMOJI_SEQUENCES)
        });
        plane_tables(&mut out, &mut bytes, "EMOJI", 2, &emoji);
        let (keys, values, pool) = decompositions();
        let (planes, starts, values) = decomposition_tables(&keys, &values);
        typed_table(&mut out, &mut bytes, "DECOMPOSE_PLANES", "u16", 2, &planes);
        typed_table(&mut out, &mut bytes, "DECOMPOSE_STARTS", "u16", 2, &starts);
        bytes += 3 * values.len();
        writeln!(out, "pub(super) const DECOMPOSE_VALUES: &[[u8; 3]] = &[").unwrap();
        for line in values.chunks(6) {
            let line: Vec<String> = line
                .iter()
                .map(|v| {
                    assert!(*v < 1 << 24);
                    let [a, b, c, _] = v.to_le_bytes();
                    format!("[0x{a:02X}, 0x{b:02X}, 0x{c:02X}]")
                })
                .collect();
            writeln!(out, "    {},", line.join(", ")).unwrap();
        }
        writeln!(out, "];").unwrap();
        writeln!(
            out,
            "pub(super) const DECOMPOSE_POOL: &str = \"{}\";",
            pool.escape_default()
        )
        .unwrap();
        bytes += pool.len();
        let (seconds, keys, values) = compositions();
        table(&mut out, &mut bytes, "COMPOSE_SECONDS", &seconds);
        table(&mut out, &mut bytes, "COMPOSE_KEYS", &keys);
        table(&mut out, &mut bytes, "COMPOSE_VALUES", &values);
        let (runs, deltas) = lowercase_runs();
        table(&mut out, &mut bytes, "LOWERCASE_RUNS", &runs);
        bytes += size_of_val(deltas.as_slice());
        writeln!(out, "pub(super) const LOWERCASE_DELTAS: &[i32] = &[").unwrap();
        for line in deltas.chunks(10) {
            let line: Vec<String> = line.iter().map(i32::to_string).collect();
            writeln!(out, "    {},", line.join(", ")).unwrap();
        }
        writeln!(out, "];").unwrap();
        (out, bytes)
    }

    #[test]
    fn tables_are_the_crates() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/ucd_tables.rs");
        let (want, bytes) = generated();
        if std::env::var_os("METIS_WRITE_UCD").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap();
        assert!(
            have == want,
            "{path} is stale: run with METIS_WRITE_UCD=1 to regenerate it"
        );
        // What the component's size budget counts: every table, the pool's text included.
        assert_eq!(table_bytes(), bytes);
    }

    #[test]
    fn lowercase_is_the_standard_librarys() {
        for c in all_chars() {
            let mine: Vec<char> = to_lowercase(c).collect();
            let want: Vec<char> = c.to_lowercase().collect();
            assert_eq!(mine, want, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn properties_are_the_crates_for_every_code_point() {
        for c in all_chars() {
            let at = format!("U+{:04X}", c as u32);
            assert_eq!(category(c), crate_category(c), "{at}");
            let format = c.general_category() == GeneralCategory::Format;
            assert_eq!(is_format(c), format, "{at}");
            let class = crate_char::canonical_combining_class(c);
            assert_eq!(canonical_combining_class(c), class, "{at}");
            assert_eq!(is_emoji(c), c.is_emoji_char(), "{at}");
            let in_sequences = c.is_emoji_char_or_emoji_component();
            assert_eq!(in_emoji_sequences(c), in_sequences, "{at}");
            let mut mine = Vec::new();
            decompose(c, &mut |d| mine.push(d));
            assert_eq!(mine, crate_decomposition(c), "{at}");
        }
    }

    fn assert_nfkc(text: &str) {
        let want: Vec<char> = text.nfkc().collect();
        assert_eq!(nfkc(text), want, "{text:?} ({})", text.escape_unicode());
        if is_nfkc_quick(text) {
            assert_eq!(
                text.chars().collect::<Vec<_>>(),
                want,
                "{}",
                text.escape_unicode()
            );
        }
    }

    /// A syllable without a trailing consonant composes with one (U+11A8 to U+11C2), not
    /// with the vowel jamo just before them nor anything after.
    #[test]
    fn a_hangul_syllable_composes_only_with_a_trailing_consonant() {
        for tail in ['\u{11A6}', '\u{11A7}', '\u{11A8}', '\u{11C2}', '\u{11C3}'] {
            for text in [
                format!("가{tail}"),
                format!("\u{1100}\u{1161}{tail}"),
                format!("각{tail}"),
            ] {
                assert_nfkc(&text);
            }
        }
        assert_eq!(nfkc("가\u{11A8}"), ['각']);
        assert_eq!(nfkc("가\u{11A7}"), ['가', '\u{11A7}']);
    }

    /// The quick check passes text in which no character decomposes, is a mark or may
    /// compose with the one before (so normalising it is skipped), and fails the rest.
    #[test]
    fn the_quick_check_passes_what_normalising_leaves_alone() {
        for text in [
            "Привет мир",
            "中文",
            "שלום",
            "\u{1100}",
            "\u{11A6}\u{11A7}",
            "\u{11C3}",
        ] {
            assert!(is_nfkc_quick(text), "{}", text.escape_unicode());
        }
        for text in [
            "é", "e\u{301}", "ﬁ", "가",
            // Jamo that compose with a syllable or a leading consonant before them.
            "\u{1161}", "\u{1175}", "\u{11A8}", "\u{11C2}",
            // A second of the composition table of combining class 0: Oriya's AA sign.
            "\u{B3E}",
        ] {
            assert!(!is_nfkc_quick(text), "{}", text.escape_unicode());
        }
    }

    /// Every code point alone, and followed by marks that reorder and compose with it.
    #[test]
    fn nfkc_is_the_crates_for_every_code_point() {
        for c in all_chars() {
            assert_nfkc(c.encode_utf8(&mut [0; 4]));
        }
        let tails = [
            "\u{301}",
            "\u{327}\u{301}",
            "\u{301}\u{327}",
            "\u{11A8}",
            "\u{1161}",
        ];
        let firsts: std::collections::HashSet<u32> =
            COMPOSE_KEYS.iter().map(|k| k & 0x1F_FFFF).collect();
        for c in all_chars().filter(|c| {
            canonical_combining_class(*c) != 0
                || is_composition_second(*c)
                || crate_decomposition(*c) != [*c]
                || firsts.contains(&(*c as u32))
                || c.is_ascii_alphabetic()
        }) {
            for tail in tails {
                assert_nfkc(&format!("{c}{tail}"));
                assert_nfkc(&format!("\u{300}{c}{tail}x"));
            }
        }
    }

    /// Random texts over characters where normalisation does something: marks of many
    /// classes, jamo, compatibility forms, composites, exclusions and singletons.
    #[test]
    fn nfkc_is_the_crates_for_random_texts() {
        let alphabet: Vec<char> =
            "aAeEoOsSuUnNkK \n\u{300}\u{301}\u{302}\u{308}\u{316}\u{327}\u{328}\
            \u{338}\u{345}\u{34F}\u{5B0}\u{5B4}\u{93C}\u{94D}\u{CCA}\u{CC6}\u{CC2}\u{CD5}\u{1100}\
            \u{1161}\u{11A8}\u{AC00}\u{AC01}\u{1E9B}\u{17F}\u{344}\u{F73}\u{F77}\u{2ADC}\u{FB01}\
            \u{2460}\u{FF76}\u{FF9E}\u{3099}\u{304B}\u{1D15E}\u{110AB}\u{110BA}\u{F900}\u{2126}\
            \u{E9}\u{1E69}\u{1D5}\u{212B}\u{3200}\u{FDFA}\u{1D400}\u{200B}\u{FEFF}\u{130}\u{1F1}"
                .chars()
                .collect();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..200_000 {
            let len = next(10);
            let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            assert_nfkc(&text);
        }
    }
}
