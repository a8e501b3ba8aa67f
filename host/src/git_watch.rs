//! Looking at git's own files, next to a write, for git at work on the work tree.
//!
//! git takes no lock of ours before it rewrites the work tree, so a write that lands while
//! it does can be undone (see `metis_memory_core::git`, which decides what each of git's
//! files means). The component sees only `.metis/`; this is the host's look at the
//! repository around it: found without running git (a repository's own config could make
//! git run a program), by walking up to the `.git` that holds the workspace, a linked
//! worktree's `.git` file followed to its own git directory.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use metis_memory_core::git::{self, GitState, JournalEntry, MARKERS};
use metis_memory_core::{MemoryFile, sha256_hex};

/// The git directory of the work tree a workspace is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitDir {
    path: PathBuf,
    /// Where the journal of this workspace's acknowledged adds is kept.
    journal: PathBuf,
}

/// The longest `.git` file read: a worktree's is one line.
const GIT_FILE_LIMIT: u64 = 4096;

impl GitDir {
    /// The git directory of the work tree holding the workspace at `root`, if any.
    pub fn find(root: &Path) -> Option<GitDir> {
        let root = fs::canonicalize(root).ok()?;
        // The first `.git` on the way up is the repository, as git takes it: one that is
        // not a usable git directory of this user's stops the look, never passes it on
        // to a directory further up (another user's `/tmp/.git`).
        let path = root
            .ancestors()
            .find(|dir| fs::symlink_metadata(dir.join(".git")).is_ok())
            .and_then(git_dir_at)
            .filter(|path| owned_by_me(path))?;
        let key = sha256_hex(root.join(".metis").to_string_lossy().as_bytes());
        let journal = path
            .join("metis-memory")
            .join(format!("adds-{}", &key[..16]));
        Some(GitDir { path, journal })
    }

    /// The git directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What git's files say now.
    pub fn state(&self) -> GitState {
        let now = SystemTime::now();
        let present: Vec<_> = MARKERS
            .iter()
            .filter_map(|marker| {
                let meta = fs::symlink_metadata(self.path.join(marker.path)).ok()?;
                // A date ahead of now (a clock stepped back, a planted marker) counts as
                // old: no marker may last for ever by being dated in the future.
                let age = meta
                    .modified()
                    .ok()
                    .map(|date| match now.duration_since(date) {
                        Ok(age) => age.as_nanos() as u64,
                        Err(ahead) if ahead.duration() > Duration::from_secs(1) => u64::MAX,
                        Err(_) => 0,
                    });
                Some((marker, age))
            })
            .collect();
        git::judge(&present)
    }

    /// The index's identity: it changes whenever a git command writes the index, which
    /// every command that rewrites the work tree does, so a command that came and went
    /// during a write is seen even though its marker is gone.
    pub fn index_stamp(&self) -> Option<(u64, SystemTime, u64)> {
        let meta = fs::metadata(self.path.join("index")).ok()?;
        Some((meta.len(), meta.modified().ok()?, inode(&meta)))
    }

    /// Waits, looking every [`git::POLL_NANOS`], for a running git command to finish, at
    /// most `wait`; what git's files say at the end. After a wait, git must have been
    /// quiet for [`git::QUIET_NANOS`] (a command's steps leave gaps between them). An
    /// operation stopped for the person is not waited for: it ends when the person ends it.
    pub fn wait_quiet(&self, wait: Duration) -> GitState {
        let started = Instant::now();
        let mut quiet_since: Option<Instant> = None;
        let mut waited = false;
        loop {
            let state = self.state();
            let stopped =
                matches!(state, GitState::AtWork(m) if m.activity == git::Activity::Stopped);
            if stopped || (state != GitState::Quiet && started.elapsed() >= wait) {
                return state;
            }
            if state == GitState::Quiet {
                let since = *quiet_since.get_or_insert_with(Instant::now);
                if !waited || since.elapsed() >= Duration::from_nanos(git::QUIET_NANOS) {
                    return state;
                }
            } else {
                waited = true;
                quiet_since = None;
            }
            std::thread::sleep(Duration::from_nanos(git::POLL_NANOS));
        }
    }

    /// The acknowledged adds journaled for this workspace, oldest first.
    pub fn journal(&self) -> Vec<JournalEntry> {
        let mut text = String::new();
        let read = open_journal(OpenOptions::new().read(true), &self.journal)
            .and_then(|file| file.take(JOURNAL_LIMIT).read_to_string(&mut text));
        if read.is_err() {
            return Vec::new();
        }
        text.lines().filter_map(git::parse_journal_line).collect()
    }

    /// Journals an acknowledged add (best effort: a journal that cannot be written never
    /// fails the write it records). One `write` of one line, appended: lines from
    /// several writers never interleave.
    pub fn journal_add(&self, file: MemoryFile, entry: &str) {
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let line = git::journal_line(&JournalEntry {
            file,
            at,
            entry: entry.to_owned(),
        });
        if !self.journal_is_private() {
            return;
        }
        let appended = open_journal(
            private_file(OpenOptions::new().create(true).append(true)),
            &self.journal,
        )
        .and_then(|mut journal| {
            journal.write_all(line.as_bytes())?;
            journal.metadata()
        });
        // Kept short: rewritten with its newest adds once it holds twice as many.
        if appended.is_ok_and(|meta| meta.len() > JOURNAL_REWRITE_BYTES) {
            let journal = self.journal();
            if journal.len() > 2 * git::JOURNAL_KEEP {
                self.rewrite_journal(&journal[journal.len() - git::JOURNAL_KEEP..]);
            }
        }
    }

    /// Whether any add to `file` is journaled (a write that may remove one reads the file
    /// first, to know what it removed).
    pub fn journals(&self, file: MemoryFile) -> bool {
        self.journal().iter().any(|added| added.file == file)
    }

    /// Forgets the journaled adds to `file` that this host's own write, taking it from
    /// `before` to `after`, removed on purpose.
    pub fn journal_forget_removed(&self, file: MemoryFile, before: &str, after: &str) {
        let journal = self.journal();
        let kept = git::forget_removed(&journal, file, before, after);
        if kept.len() != journal.len() {
            self.rewrite_journal(&kept);
        }
    }

    /// Replaces the journal with `entries` (a temporary file renamed over it).
    pub fn rewrite_journal(&self, entries: &[JournalEntry]) {
        if !self.journal_is_private() {
            return;
        }
        let temp = self
            .journal
            .with_extension(format!("{:016x}.tmp", crate::token::owner_token()));
        let text: String = entries.iter().map(git::journal_line).collect();
        let written = private_file(OpenOptions::new().create_new(true).write(true))
            .open(&temp)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .and_then(|()| fs::rename(&temp, &self.journal));
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
    }

    /// Whether the journal's directory is (or could be made) this user's own, mode 0700,
    /// in a git directory this user owns: the journal holds what agents added, and the
    /// `.git` file a hostile repository ships may point anywhere (a directory others read).
    fn journal_is_private(&self) -> bool {
        if !owned_by_me(&self.path) {
            return false;
        }
        let dir = self.journal.parent().unwrap_or(&self.path);
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(dir) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                owned_by_me(dir)
                    && fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir() && private(&meta))
            }
            Err(_) => false,
        }
    }
}

/// The most of a journal read (its lines are entries, each under a file's hard cap).
const JOURNAL_LIMIT: u64 = 4 << 20;
/// A journal larger than this is looked at for a rewrite.
const JOURNAL_REWRITE_BYTES: u64 = 64 << 10;

/// The git directory `dir/.git` names: the directory itself, or the one a `.git` file
/// (a linked worktree's, a submodule's) points at.
fn git_dir_at(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    // Followed if a link, as git follows it.
    let meta = fs::metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return fs::canonicalize(&dot_git).ok();
    }
    if !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    File::open(&dot_git)
        .ok()?
        .take(GIT_FILE_LIMIT)
        .read_to_string(&mut text)
        .ok()?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let path = dir.join(named);
    fs::metadata(&path).ok()?.is_dir().then_some(path)
}

/// Whether no one but its owner may read, write or enter it.
fn private(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o077 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// Whether `path` (not followed if a link) belongs to this process's effective user.
fn owned_by_me(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        fs::symlink_metadata(path).is_ok_and(|meta| meta.uid() == euid)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        true
    }
}

/// The journal at `path`, opened with `options`, only if it is what this host makes: a
/// regular file of this user's, with one link, that no one else may read. A link is
/// never followed and a FIFO never waited on: a repository received whole (a tarball, a
/// copy) may hold a planted `.git/metis-memory/adds-…`, and an append through a link
/// would write an agent's entry into any file of this user's (a shell's rc file).
fn open_journal(options: &mut OpenOptions, path: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        let file = options.open(path)?;
        let meta = file.metadata()?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        let ours =
            meta.is_file() && meta.uid() == euid && meta.nlink() == 1 && meta.mode() & 0o077 == 0;
        if !ours {
            return Err(std::io::Error::other("not a journal this user made"));
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        options.open(path)
    }
}

/// `options` creating a file only this user may read (0600 on unix).
fn private_file(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    options
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> u64 {
    0
}

/// An add that was acknowledged and that its file no longer holds: git (a stash, a
/// reset, a rebase aborted) or a person took it out after the add returned. Found from the
/// journal this host keeps in the repository's git directory; `metis-memory recover`
/// lists them and adds them again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostAdd {
    pub file: crate::MemoryFile,
    pub entry: String,
    /// When the add was acknowledged, in seconds since the Unix epoch.
    pub acknowledged_at: u64,
}

impl crate::Workspace {
    /// The acknowledged adds the workspace's files no longer hold, newest first, each
    /// entry once; none outside a git repository (the journal is kept only inside one).
    /// A file that cannot be read as text is not judged.
    pub fn lost_adds(&self) -> Vec<LostAdd> {
        let Some(git) = GitDir::find(self.root()) else {
            return Vec::new();
        };
        let journal = git.journal();
        if journal.is_empty() {
            return Vec::new();
        }
        git::missing(&journal, |file| {
            self.read(crate::MemoryFile::from_core(file)).ok()
        })
        .into_iter()
        .map(|lost| LostAdd {
            file: crate::MemoryFile::from_core(lost.file),
            entry: lost.entry.clone(),
            acknowledged_at: lost.at,
        })
        .collect()
    }

    /// Forgets `lost` (from [`lost_adds`](Self::lost_adds)): they were meant to go, and
    /// are listed no more.
    pub fn forget_lost_adds(&self, lost: &[LostAdd]) {
        let Some(git) = GitDir::find(self.root()) else {
            return;
        };
        let journal = git.journal();
        let kept: Vec<JournalEntry> = journal
            .iter()
            .filter(|added| {
                !lost
                    .iter()
                    .any(|gone| gone.file.core() == added.file && gone.entry == added.entry)
            })
            .cloned()
            .collect();
        if kept.len() != journal.len() {
            git.rewrite_journal(&kept);
        }
    }
}
