//! Which rules may start at a token: built once per stream and scan from the rules' first
//! slots, so a start is tried only by the rules whose first token it could be. Most tokens
//! start none. The answer is a superset (exclusions are not applied): each rule it names is
//! still matched in full.

use alloc::vec::Vec;

use super::pattern::{Set, Slot, byte_mask, glob as glob_matches, required_bytes as required};
use super::rules::{RULES_TABLE, Stream};

/// The rules (bit `i` is `RULES_TABLE[i]`) as one word.
pub(super) type Rules = u128;

const _: () = assert!(RULES_TABLE.len() <= Rules::BITS as usize);

/// How rare a byte is in ordinary text, lower is rarer: punctuation and anything outside
/// ASCII, then digits, then letters from the least to the most frequent in English.
fn rarity(b: u8) -> usize {
    // The letters a to z, each by its place in "zqxjkvbpygfwmucldrhsnioate".
    const LETTERS: [u8; 26] = [
        23, 6, 14, 16, 25, 10, 9, 18, 21, 3, 4, 15, 12, 20, 22, 7, 1, 17, 19, 24, 13, 5, 11, 2, 8,
        0,
    ];
    match b {
        b'0'..=b'9' => 1,
        b'a'..=b'z' => 2 + usize::from(LETTERS[usize::from(b - b'a')]),
        _ => 0,
    }
}

struct Glob {
    pattern: &'static [u8],
    required: u128,
    rules: Rules,
}

pub(super) struct FirstIndex {
    /// Rules whose first token is not bounded by a set (a gap first): tried everywhere.
    always: Rules,
    /// Open addressing over the plain entries (length a power of two).
    /// Each with its hash.
    exact: Vec<Option<(u64, &'static str, Rules)>>,
    /// The globs by their rarest required byte (folded), and those requiring none.
    buckets: Vec<Vec<Glob>>,
    keyed: u128,
    unkeyed: Vec<Glob>,
}

/// The sets one of which the first token of a match is in, or `false` if a match may
/// start with any token.
fn first_sets(slots: &'static [Slot], out: &mut Vec<Set>) -> bool {
    for slot in slots {
        match slot {
            Slot::One(set) => {
                out.push(set);
                return true;
            }
            Slot::Opt(set) => out.push(set),
            Slot::Many(set, n) => {
                if *n > 0 {
                    out.push(set);
                }
            }
            Slot::Gap(_) | Slot::Unless(_) => return false,
        }
    }
    false
}

fn hash(text: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in text {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (h >> 29)
}

impl FirstIndex {
    pub(super) fn new(stream: Stream) -> FirstIndex {
        let mut always = 0;
        // The distinct first sets (by address) with the rules they start: many rules
        // share one (the network commands, the readers).
        let mut starting: Vec<(Set, Rules)> = Vec::new();
        let mut sets = Vec::new();
        for (index, rule) in RULES_TABLE.iter().enumerate() {
            if rule.stream != stream {
                continue;
            }
            let bit: Rules = 1 << index;
            sets.clear();
            if !first_sets(rule.slots, &mut sets) {
                always |= bit;
                continue;
            }
            for set in &sets {
                match starting
                    .iter_mut()
                    .find(|(known, _)| core::ptr::eq(*known, *set))
                {
                    Some((_, rules)) => *rules |= bit,
                    None => starting.push((set, bit)),
                }
            }
        }
        let mut exact: Vec<(&'static str, Rules)> = Vec::new();
        let mut globs: Vec<Glob> = Vec::new();
        for (set, bits) in starting {
            for entry in set.iter() {
                if entry.starts_with('!') {
                    continue;
                }
                if entry.contains('*') {
                    globs.push(Glob {
                        pattern: entry.as_bytes(),
                        required: required(entry.as_bytes()),
                        rules: bits,
                    });
                } else {
                    exact.push((entry, bits));
                }
            }
        }
        let size = (exact.len() * 2).next_power_of_two().max(16);
        let mut table: Vec<Option<(u64, &'static str, Rules)>> = alloc::vec![None; size];
        for (entry, bit) in exact {
            let hashed = hash(entry.as_bytes());
            let mut place = hashed as usize & (size - 1);
            loop {
                match &mut table[place] {
                    Some((h, known, rules)) if *h == hashed && *known == entry => {
                        *rules |= bit;
                        break;
                    }
                    Some(_) => place = (place + 1) & (size - 1),
                    empty @ None => {
                        *empty = Some((hashed, entry, bit));
                        break;
                    }
                }
            }
        }
        let mut buckets: Vec<Vec<Glob>> = (0..128).map(|_| Vec::new()).collect();
        let mut keyed = 0;
        let mut unkeyed = Vec::new();
        for glob in globs {
            let key = glob
                .pattern
                .iter()
                .copied()
                .filter(|&b| glob.required & (1 << (b & 127)) != 0)
                .min_by_key(|&b| rarity(b));
            match key {
                Some(b) => {
                    keyed |= 1 << (b & 127);
                    buckets[usize::from(b & 127)].push(glob);
                }
                None => unkeyed.push(glob),
            }
        }
        FirstIndex {
            always,
            exact: table,
            buckets,
            keyed,
            unkeyed,
        }
    }

    /// The rules whose first slot `token` may match.
    pub(super) fn rules_at(&self, token: &str) -> Rules {
        let bytes = token.as_bytes();
        let mut rules = self.always;
        let size = self.exact.len();
        let hashed = hash(bytes);
        let mut place = hashed as usize & (size - 1);
        while let Some((h, entry, bits)) = &self.exact[place] {
            if *h == hashed && *entry == token {
                rules |= bits;
                break;
            }
            place = (place + 1) & (size - 1);
        }
        if self.keyed == 0 && self.unkeyed.is_empty() {
            return rules;
        }
        let mask = byte_mask(bytes);
        let check = |glob: &Glob, rules: &mut Rules| {
            if glob.rules & !*rules != 0
                && glob.required & !mask == 0
                && glob_matches(glob.pattern, bytes)
            {
                *rules |= glob.rules;
            }
        };
        for g in &self.unkeyed {
            check(g, &mut rules);
        }
        let mut keys = mask & self.keyed;
        while keys != 0 {
            let key = keys.trailing_zeros() as usize;
            keys &= keys - 1;
            for g in &self.buckets[key] {
                check(g, &mut rules);
            }
        }
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::pattern::in_set;

    /// Every plain entry and every glob of a first set reaches its rule.
    #[test]
    fn the_index_names_every_rule_a_first_token_may_start() {
        for stream in [Stream::Words, Stream::Shell] {
            let index = FirstIndex::new(stream);
            let probes = [
                "curl",
                "/usr/bin/curl",
                "crontab",
                "crontab -e",
                "*",
                "*/5",
                "ssh-rsa",
                "ecdsa-sha2-nistp256",
                "~/.ssh/authorized_keys",
                "x/dev/tcp/1",
                "the",
                "system-prompt:x",
                "c:",
                "rm",
                "/bin/rm",
                "mkfs.ext4",
                "ignore",
                "you",
                "send",
                "of=/dev/sda",
                "zzz",
                "",
            ];
            for probe in probes {
                let found = index.rules_at(probe);
                for (i, rule) in RULES_TABLE.iter().enumerate() {
                    if rule.stream != stream {
                        continue;
                    }
                    let mut sets = Vec::new();
                    let may = !first_sets(rule.slots, &mut sets)
                        || sets.iter().any(|set| in_set(set, probe));
                    if may {
                        assert!(found & (1 << i) != 0, "{probe:?} may start rule {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn required_bytes_of_globs() {
        assert_eq!(required(b"*/curl"), byte_mask(b"/curl"));
        assert_eq!(required(b"\\*/*"), byte_mask(b"*/"));
        assert_eq!(required(b"c:\\*"), byte_mask(b"c:*"));
        assert_eq!(required(b"*"), 0);
    }
}
