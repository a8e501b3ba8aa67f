//! Git at work on the repository a workspace is in, and the adds it may have undone.
//!
//! git takes no lock of ours and runs no hook before it rewrites the work tree (a pull, a
//! stash, a rebase, a checkout): it unlinks a memory file and writes its own version, so a
//! write that lands meanwhile is overwritten, or overwrites git's. The host looks at git's
//! own files (the component sees only `.metis/`); what each file means, and what a writer
//! does about it, is decided here, as data. The protocol is in docs/reliability.md, "Next
//! to plain git".

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::MemoryFile;

/// What a marker file says git is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// A command is running and rewriting the work tree now: a writer waits for it to
    /// finish (at most [`WAIT_NANOS`]), and an add made while it runs is checked after it.
    Running,
    /// An operation stopped half-way for the person (conflicts, an edit): it ends with a
    /// command that may reset the work tree (`--abort`), so a writer is refused until the
    /// person finishes it.
    Stopped,
}

/// One of git's files, in a work tree's git directory, that exists while git is at work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    /// Its path, relative to the work tree's git directory (`.git/`, or
    /// `.git/worktrees/NAME/` for a linked worktree, whose index and operations are its own).
    pub path: &'static str,
    pub activity: Activity,
    /// What git is doing, for a refusal: "git is {doing}".
    pub doing: &'static str,
    /// How the person ends it, for a refusal of a stopped operation.
    pub finish: &'static str,
}

/// Every marker, in the order a refusal prefers to name them (a stopped operation first:
/// its index lock comes and goes while the person works on it). A rebase's directory and
/// `MERGE_HEAD` are there while the command runs too, so they are waited out like a
/// running command, and refused, saying how the person ends them, if they outlast it;
/// `REBASE_HEAD`, `CHERRY_PICK_HEAD` and `REVERT_HEAD` are written when one stops.
pub const MARKERS: [Marker; 8] = [
    Marker {
        path: "REBASE_HEAD",
        activity: Activity::Stopped,
        doing: "in the middle of a rebase, stopped for the person",
        finish: "git rebase --continue, or --abort",
    },
    Marker {
        path: "rebase-merge",
        activity: Activity::Running,
        doing: "in the middle of a rebase",
        finish: "git rebase --continue, or --abort",
    },
    Marker {
        path: "rebase-apply",
        activity: Activity::Running,
        doing: "in the middle of a rebase or `git am`",
        finish: "git rebase --continue or git am --continue, or --abort",
    },
    Marker {
        path: "MERGE_HEAD",
        activity: Activity::Running,
        doing: "in the middle of a merge",
        finish: "commit the merge, or git merge --abort",
    },
    Marker {
        path: "CHERRY_PICK_HEAD",
        activity: Activity::Stopped,
        doing: "in the middle of a cherry-pick",
        finish: "git cherry-pick --continue, or --abort",
    },
    Marker {
        path: "REVERT_HEAD",
        activity: Activity::Stopped,
        doing: "in the middle of a revert",
        finish: "git revert --continue, or --abort",
    },
    Marker {
        path: "MERGE_AUTOSTASH",
        activity: Activity::Running,
        doing: "merging with your local changes stashed (pull --autostash)",
        finish: "",
    },
    Marker {
        path: "index.lock",
        activity: Activity::Running,
        doing: "updating the index and the work tree",
        finish: "",
    },
];

/// An `index.lock` older than this is not trusted: a git killed mid-command leaves it
/// (git itself refuses to run until it is removed), and memory writes must not stop for
/// ever because of one.
pub const STALE_NANOS: u64 = 60_000_000_000;

/// How long git must have been quiet, after a writer waited for it, before the writer
/// goes on: a command runs in steps (a pull's reset, then its stash apply; a checkout's
/// unlink, then its create), and writers queued on its lock would otherwise all write in
/// the moment between two of them.
pub const QUIET_NANOS: u64 = 150_000_000;

/// How long a writer waits for a running git command to finish before it is refused.
pub const WAIT_NANOS: u64 = 5_000_000_000;

/// How long an add made while git ran is held, its acknowledgment waiting for git to
/// finish so that the add can be checked, before it is acknowledged unchecked (and left
/// to the journal).
pub const SETTLE_NANOS: u64 = 10_000_000_000;

/// How often a waiter looks again.
pub const POLL_NANOS: u64 = 10_000_000;

/// What the host found of git at one look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GitState {
    /// Nothing of git's at work (or not in a repository).
    Quiet,
    /// git is at work, as this marker says.
    AtWork(&'static Marker),
}

/// Judges what the host found: each marker present, with its age (`None` when its date is
/// unknown). A stopped operation wins; an `index.lock` older than [`STALE_NANOS`] is
/// ignored.
pub fn judge(present: &[(&'static Marker, Option<u64>)]) -> GitState {
    let trusted = |(marker, age): &&(&'static Marker, Option<u64>)| {
        marker.path != "index.lock" || age.is_none_or(|age| age <= STALE_NANOS)
    };
    MARKERS
        .iter()
        .find(|wanted| {
            present
                .iter()
                .filter(trusted)
                .any(|(marker, _)| marker.path == wanted.path)
        })
        .map_or(GitState::Quiet, GitState::AtWork)
}

/// The refusal of a write to `file` while git is at work as `marker` says.
pub fn refusal_text(file: MemoryFile, marker: &Marker) -> String {
    let name = file.name();
    match marker.finish {
        "" => format!(
            "{name} was not written: git is {} in this repository (its {} is there), and a \
             write now could be undone by it. Nothing was written; try again in a moment.",
            marker.doing, marker.path
        ),
        finish => format!(
            "{name} was not written: git is {} in this repository, and ending it ({finish}) \
             may reset the work tree and undo the write. Nothing was written; try again once \
             it is finished.",
            marker.doing
        ),
    }
}

/// Whether `content` holds `entry` as an add leaves it: starting a line and ending one.
pub fn holds_entry(content: &str, entry: &str) -> bool {
    if entry.is_empty() {
        return true;
    }
    content.match_indices(entry).any(|(at, _)| {
        let end = at + entry.len();
        (at == 0 || content.as_bytes()[at - 1] == b'\n')
            && (end == content.len() || content.as_bytes()[end] == b'\n')
    })
}

/// The journal of acknowledged adds: one line per add, kept in the repository's git
/// directory (per clone, never committed, never in `.metis/`), so that an add git undid
/// after it was acknowledged is found (`status`) and can be made again (`recover`).
pub const JOURNAL_KEEP: usize = 256;

/// One acknowledged add.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalEntry {
    pub file: MemoryFile,
    /// Seconds since the Unix epoch, when it was acknowledged.
    pub at: u64,
    /// The entry as the add left it (stripped).
    pub entry: String,
}

/// The journal line of an add: `{at}\t{file}\t{entry}`, the entry's backslashes,
/// newlines, carriage returns and tabs escaped, so one add is one line.
pub fn journal_line(entry: &JournalEntry) -> String {
    let mut escaped = String::with_capacity(entry.entry.len());
    for c in entry.entry.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            c => escaped.push(c),
        }
    }
    format!("{}\t{}\t{escaped}\n", entry.at, entry.file.file_name())
}

/// The add a journal line records, if it is one (a torn or foreign line is skipped).
pub fn parse_journal_line(line: &str) -> Option<JournalEntry> {
    let mut fields = line.strip_suffix('\n').unwrap_or(line).splitn(3, '\t');
    let at = fields.next()?.parse().ok()?;
    let file = match fields.next()? {
        "MEMORY.md" => MemoryFile::Memory,
        "USER.md" => MemoryFile::User,
        _ => return None,
    };
    let mut entry = String::new();
    let mut chars = fields.next()?.chars();
    while let Some(c) = chars.next() {
        entry.push(match c {
            '\\' => match chars.next()? {
                '\\' => '\\',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                _ => return None,
            },
            c => c,
        });
    }
    (!entry.is_empty()).then_some(JournalEntry { file, at, entry })
}

/// The acknowledged adds of `journal` that `content_of` (each file's text now, `None`
/// when it cannot be read as text) no longer holds: each entry once, newest first.
pub fn missing(
    journal: &[JournalEntry],
    content_of: impl Fn(MemoryFile) -> Option<String>,
) -> Vec<&JournalEntry> {
    let contents: Vec<(MemoryFile, Option<String>)> = MemoryFile::ALL
        .iter()
        .map(|&file| (file, content_of(file)))
        .collect();
    let mut found: Vec<&JournalEntry> = Vec::new();
    for added in journal.iter().rev() {
        let Some((_, Some(content))) = contents.iter().find(|(file, _)| *file == added.file) else {
            continue;
        };
        let listed = found
            .iter()
            .any(|seen| seen.file == added.file && seen.entry == added.entry);
        if !listed && !holds_entry(content, &added.entry) {
            found.push(added);
        }
    }
    found
}

/// The journal's lines to keep after its own writer's non-add write took `file` from
/// `before` to `after`: an entry that write removed was removed on purpose, and is
/// forgotten; one already missing before it (git undid the add) is still listed.
pub fn forget_removed(
    journal: &[JournalEntry],
    file: MemoryFile,
    before: &str,
    after: &str,
) -> Vec<JournalEntry> {
    journal
        .iter()
        .filter(|added| {
            added.file != file
                || holds_entry(after, &added.entry)
                || !holds_entry(before, &added.entry)
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn marker(path: &str) -> &'static Marker {
        MARKERS.iter().find(|m| m.path == path).unwrap()
    }

    #[test]
    fn a_stopped_operation_wins_and_a_stale_lock_is_ignored() {
        let lock = marker("index.lock");
        let rebase = marker("REBASE_HEAD");
        assert_eq!(judge(&[]), GitState::Quiet);
        assert_eq!(judge(&[(lock, Some(1))]), GitState::AtWork(lock));
        assert_eq!(judge(&[(lock, None)]), GitState::AtWork(lock));
        assert_eq!(judge(&[(lock, Some(STALE_NANOS + 1))]), GitState::Quiet);
        assert_eq!(
            judge(&[(lock, Some(1)), (rebase, Some(u64::MAX))]),
            GitState::AtWork(rebase)
        );
    }

    #[test]
    fn refusals_name_the_file_what_git_does_and_how_it_ends() {
        let text = refusal_text(MemoryFile::Memory, marker("rebase-merge"));
        assert!(text.starts_with("MEMORY.md was not written: git is in the middle of a rebase"));
        assert!(text.ends_with("try again once it is finished."), "{text}");
        assert!(text.contains("git rebase --continue, or --abort"));
        let text = refusal_text(MemoryFile::User, marker("index.lock"));
        assert!(text.contains("its index.lock is there"), "{text}");
        assert!(text.ends_with("try again in a moment."));
    }

    #[test]
    fn an_entry_is_held_only_as_whole_lines() {
        assert!(holds_entry("- a\n- b\n", "- b"));
        assert!(holds_entry("- a\n- b", "- b"));
        assert!(holds_entry("- a\n- b\n  more\n", "- b\n  more"));
        assert!(!holds_entry("- a\n- bc\n", "- b"));
        assert!(!holds_entry("x- b\n", "- b"));
        assert!(!holds_entry("", "- b"));
    }

    #[test]
    fn journal_lines_round_trip_whatever_the_entry_holds() {
        for text in ["- plain", "- two\nlines", "tab\there \\n not a newline\r"] {
            let entry = JournalEntry {
                file: MemoryFile::User,
                at: 1_790_000_000,
                entry: text.into(),
            };
            let line = journal_line(&entry);
            assert_eq!(line.matches('\n').count(), 1, "{line:?}");
            assert_eq!(parse_journal_line(&line), Some(entry));
        }
        for torn in [
            "",
            "17\tMEMORY.md",
            "x\tMEMORY.md\t- a",
            "1\tOTHER.md\t- a",
            "1\tUSER.md\t\\q",
        ] {
            assert_eq!(parse_journal_line(torn), None, "{torn:?}");
        }
    }

    #[test]
    fn missing_lists_each_lost_entry_once_newest_first() {
        let add = |at, entry: &str| JournalEntry {
            file: MemoryFile::Memory,
            at,
            entry: entry.into(),
        };
        let journal = vec![
            add(1, "- lost"),
            add(2, "- kept"),
            add(3, "- lost"),
            add(4, "- gone"),
        ];
        let content = |file| (file == MemoryFile::Memory).then(|| String::from("- kept\n"));
        let lost: Vec<u64> = missing(&journal, content).iter().map(|e| e.at).collect();
        assert_eq!(lost, [4, 3]);
        // "- gone" was removed by the write; "- lost" was missing before it, and stays.
        let kept = forget_removed(&journal, MemoryFile::Memory, "- kept\n- gone\n", "- kept\n");
        let kept: Vec<u64> = kept.iter().map(|e| e.at).collect();
        assert_eq!(kept, [1, 2, 3]);
        assert!(missing(&journal, |_| None).is_empty());
    }
}
