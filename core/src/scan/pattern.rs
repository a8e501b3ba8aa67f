//! Token patterns: a sequence of slots, each matching tokens from a set of small globs.

use alloc::string::String;
use alloc::vec::Vec;

use super::tokens::Token;

/// Entries a token is matched against. A plain entry is an exact token; `*` in an entry
/// matches any run of characters (`\*` a literal star); an entry starting with `!`
/// excludes what it matches, as in a gitignore file: `["*id_rsa*", "!*.pub"]` is any
/// token naming an `id_rsa` but not its public key. A token is in the set when some
/// plain entry matches it and no `!` entry does.
pub(super) type Set = &'static [&'static str];

/// One position of a pattern.
pub(super) enum Slot {
    /// One token from the set.
    One(Set),
    /// One token from the set, or none.
    Opt(Set),
    /// Up to `n` tokens of anything (the word patterns' gap).
    Gap(usize),
    /// Zero to `n` tokens, each from the set.
    Many(Set, usize),
    /// Nothing, where the pattern given does not match: "include `.env`" but not
    /// "include `.env` in `.dockerignore`".
    Unless(&'static [Slot]),
}

pub(super) use Slot::{Gap, Many, One, Opt, Unless};

/// Whether `token` is in `set`.
pub(super) fn in_set(set: Set, token: &str) -> bool {
    let mut included = false;
    for entry in set {
        match entry.strip_prefix('!') {
            Some(excluded) => {
                if glob(excluded.as_bytes(), token.as_bytes()) {
                    return false;
                }
            }
            None => included = included || glob(entry.as_bytes(), token.as_bytes()),
        }
    }
    included
}

/// A set prepared for many lookups: exact entries sorted for a binary search, the globs
/// and the exclusions apart. Same answers as `in_set`.
pub(super) struct Prepared {
    exact: Vec<&'static str>,
    globs: Vec<&'static str>,
    excluded: Vec<&'static str>,
}

impl Prepared {
    pub(super) fn new(set: Set) -> Prepared {
        let mut prepared = Prepared {
            exact: Vec::new(),
            globs: Vec::new(),
            excluded: Vec::new(),
        };
        for entry in set {
            match entry.strip_prefix('!') {
                Some(excluded) => prepared.excluded.push(excluded),
                None if entry.contains('*') => prepared.globs.push(entry),
                None => prepared.exact.push(entry),
            }
        }
        prepared.exact.sort_unstable();
        prepared
    }

    pub(super) fn contains(&self, token: &str) -> bool {
        let included = self.exact.binary_search(&token).is_ok()
            || self
                .globs
                .iter()
                .any(|g| glob(g.as_bytes(), token.as_bytes()));
        included
            && !self
                .excluded
                .iter()
                .any(|e| glob(e.as_bytes(), token.as_bytes()))
    }
}

/// `pattern` against the whole of `text`: `*` any run, `\*` a star, anything else itself.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    if !pattern.contains(&b'*') {
        return pattern == text;
    }
    if pattern.contains(&b'\\') {
        return glob_escaped(pattern, text);
    }
    // Stars only: the piece before the first star is a prefix, the piece after the last a
    // suffix, and the pieces between are found in order, each as early as it can be.
    let (Some(first), Some(last)) = (
        pattern.iter().position(|&b| b == b'*'),
        pattern.iter().rposition(|&b| b == b'*'),
    ) else {
        return false;
    };
    let (prefix, suffix) = (&pattern[..first], &pattern[last + 1..]);
    if text.len() < prefix.len() + suffix.len()
        || !text.starts_with(prefix)
        || !text.ends_with(suffix)
    {
        return false;
    }
    let mut rest = &text[prefix.len()..text.len() - suffix.len()];
    if first < last {
        for piece in pattern[first + 1..last].split(|&b| b == b'*') {
            match find(rest, piece) {
                Some(at) => rest = &rest[at + piece.len()..],
                None => return false,
            }
        }
    }
    true
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The general case, with `\*` escapes: linear backtracking to the last star, so a match
/// costs at most `pattern.len() * text.len()` steps.
fn glob_escaped(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // Where to resume after the last star: the pattern after it, the text it covers.
    let mut resume: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                p += 1;
                resume = Some((p, t));
                continue;
            }
            Some(b'\\') if pattern.get(p + 1) == Some(&text[t]) => {
                p += 2;
                t += 1;
                continue;
            }
            Some(&c) if c != b'\\' && c == text[t] => {
                p += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        match resume {
            Some((after_star, covered)) => {
                p = after_star;
                t = covered + 1;
                resume = Some((after_star, covered + 1));
            }
            None => return false,
        }
    }
    while pattern.get(p) == Some(&b'*') {
        p += 1;
    }
    p == pattern.len()
}

/// The end of a match of `pattern` at `tokens[start..]`, trying optional slots both ways
/// and the fewest tokens first for a gap or a run.
pub(super) fn match_at(pattern: &[Slot], tokens: &[Token], start: usize) -> Option<usize> {
    let Some((slot, rest)) = pattern.split_first() else {
        return Some(start);
    };
    let token = tokens.get(start).map(|t| &*t.text);
    match slot {
        One(set) => token
            .filter(|t| in_set(set, t))
            .and_then(|_| match_at(rest, tokens, start + 1)),
        Opt(set) => token
            .filter(|t| in_set(set, t))
            .and_then(|_| match_at(rest, tokens, start + 1))
            .or_else(|| match_at(rest, tokens, start)),
        Gap(n) => (0..=*n).find_map(|skip| {
            match_at(rest, tokens, start + skip).filter(|_| start + skip <= tokens.len())
        }),
        Many(set, n) => {
            let run = tokens[start.min(tokens.len())..]
                .iter()
                .take(*n)
                .take_while(|t| in_set(set, &t.text))
                .count();
            (0..=run).find_map(|k| match_at(rest, tokens, start + k))
        }
        Unless(not) => match match_at(not, tokens, start) {
            Some(_) => None,
            None => match_at(rest, tokens, start),
        },
    }
}

/// Tokens that may stand between a negation and what it negates: "never run `rm -rf ~`",
/// "don't ever `cat .env`", "remember not to `sudo rm -rf /`".
const BRIDGE: Set = &[
    "run", "ever", "just", "sudo", "to", "the", "a", "use", "execute", "type", "call", "do",
    "command", "commands",
];
/// How many bridge words may stand between a negation and the match ("don't ever run
/// `sudo rm -rf /`": three).
const BRIDGE_REACH: usize = 3;
const NEGATION_REACH: usize = 1;
/// "or" between a negated command and this one, and how far back the negation may be.
const ALTERNATIVE: Set = &["or", "nor"];
const ALTERNATIVE_REACH: usize = 8;

/// Whether the match at `tokens[start]` is negated: just before it, one of `negations`
/// with at most three bridge words between. Any other word in between (as in
/// "don't forget to `cat .env`") means the negation is about something else.
///
/// A negation also reaches over "or" to the command before it: in "never `rm -rf /` or
/// `rm -rf ~`" both are negated.
pub(super) fn negated(negations: Set, tokens: &[Token], start: usize) -> bool {
    if negations.is_empty() {
        return false;
    }
    let bare = |token: &Token| -> String {
        String::from(token.text.trim_end_matches([',', '.', ':', ';', '!', '?']))
    };
    let mut before = tokens[..start].iter().rev();
    let mut bridged = 0;
    for token in before.by_ref().take(NEGATION_REACH + BRIDGE_REACH) {
        let word = bare(token);
        if in_set(negations, &word) {
            return true;
        }
        if in_set(ALTERNATIVE, &word) {
            return before
                .take(ALTERNATIVE_REACH)
                .any(|token| in_set(negations, &bare(token)));
        }
        if !in_set(BRIDGE, &word) {
            return false;
        }
        bridged += 1;
        if bridged > BRIDGE_REACH {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob(b"abc", b"abc"));
        assert!(!glob(b"abc", b"abcd"));
        assert!(glob(b"*id_rsa*", b"@~/.ssh/id_rsa"));
        assert!(glob(b"*id_rsa*", b"id_rsa.pub"));
        assert!(glob(b"$*token*", b"$github_token"));
        assert!(!glob(b"$*token*", b"github_token"));
        assert!(glob(b"/\\*", b"/*"));
        assert!(!glob(b"/\\*", b"/etc"));
        assert!(glob(b"*", b""));
        assert!(glob(b"a*b*c", b"aXbYbZc"));
        assert!(!glob(b"a*b*c", b"aXbYbZ"));
        assert!(glob(b"c:\\*", b"c:*"));
        assert!(!glob(b"c:\\*", b"c:x"));
    }

    #[test]
    fn sets_exclude_with_a_bang() {
        let keys: Set = &["*id_rsa*", "*id_ed25519*", "!*.pub"];
        assert!(in_set(keys, "~/.ssh/id_ed25519"));
        assert!(!in_set(keys, "~/.ssh/id_ed25519.pub"));
        assert!(!in_set(keys, "~/.ssh/config"));
        assert!(!in_set(&["!x"], "y"));
    }
}
