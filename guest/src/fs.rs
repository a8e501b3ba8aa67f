//! The WASI layer: one read of a memory file, and an atomic replace, inside the `.metis`
//! preopen. Symlinks are never followed, so nothing outside `.metis/` is ever reached.

use alloc::string::String;
use alloc::vec::Vec;

use metis_memory_core::lock::{
    BREAK_LEASE_NANOS, LEASE_NANOS, break_lock_name, is_aside_of, is_pending_lock_of, is_temp_of,
    temp_name,
};
use metis_memory_core::{MemoryFile, StoreError};
use wasip2::filesystem::preopens::get_directories;
use wasip2::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

use crate::errors::io_error;
use crate::lock::{WriteLock, is_stale};
use crate::settings::Settings;

/// The guest path the host pre-opens the workspace's `.metis/` at.
const METIS_DIR: &str = ".metis";
/// The guest path the host pre-opens the user's own `.metis/` at (global user memory).
const GLOBAL_METIS_DIR: &str = "global-metis";
const READ_CHUNK: u64 = 64 * 1024;

/// The memory directories the host pre-opened: the workspace's `.metis/` (`None` when the
/// workspace does not have one yet) and, with global user memory on, the user's own.
pub struct MetisDir {
    workspace: Option<Descriptor>,
    global: Option<Descriptor>,
    /// The token this instance's write names its lock and temporary file after: the
    /// host's, or random, drawn when a write first needs it (a read makes no call for it).
    owner: ::core::cell::OnceCell<u64>,
    /// See `Settings::read_only_mount`.
    read_only_mount: bool,
}

impl MetisDir {
    pub fn open(settings: &Settings) -> Self {
        let mut dirs = MetisDir {
            workspace: None,
            global: None,
            owner: settings.owner.map_or_else(Default::default, Into::into),
            read_only_mount: settings.read_only_mount,
        };
        for (dir, name) in get_directories() {
            match name.as_str() {
                METIS_DIR => dirs.workspace = Some(dir),
                GLOBAL_METIS_DIR => dirs.global = Some(dir),
                _ => {}
            }
        }
        dirs
    }

    fn owner(&self) -> u64 {
        *self
            .owner
            .get_or_init(wasip2::random::random::get_random_u64)
    }

    /// The pre-opened directories with the files each holds.
    pub fn descriptors(&self) -> impl Iterator<Item = (&Descriptor, &'static [MemoryFile])> {
        let workspace = self
            .workspace
            .as_ref()
            .map(|dir| (dir, &MemoryFile::ALL[..]));
        let global = self
            .global
            .as_ref()
            .map(|dir| (dir, &[MemoryFile::GlobalUser][..]));
        workspace.into_iter().chain(global)
    }

    /// Whether the user's own `.metis/` is the workspace's (a workspace at home): then
    /// the two USER.md are one file.
    pub fn global_is_workspace(&self) -> bool {
        match (&self.workspace, &self.global) {
            (Some(workspace), Some(global)) => workspace.is_same_object(global),
            _ => false,
        }
    }

    /// The directory `file` is in, if the host pre-opened it.
    fn dir(&self, file: MemoryFile) -> Option<&Descriptor> {
        match file {
            MemoryFile::GlobalUser => self.global.as_ref(),
            _ => self.workspace.as_ref(),
        }
    }

    /// The file's status, or `None` when it does not exist. Anything but a regular file
    /// (a symlink included, since links are not followed) is an error, and so is a file
    /// with another hard link: that name may be outside `.metis/` (the store's own
    /// writes always leave one link, since they rename a new file into place).
    pub fn stat(&self, file: MemoryFile) -> Result<Option<DescriptorStat>, StoreError> {
        let Some(dir) = self.dir(file) else {
            return Ok(None);
        };
        match dir.stat_at(PathFlags::empty(), file.file_name()) {
            Ok(stat) if stat.type_ == DescriptorType::RegularFile && stat.link_count <= 1 => {
                Ok(Some(stat))
            }
            Ok(_) => Err(StoreError::NotARegularFile { file }),
            Err(ErrorCode::NoEntry) => Ok(None),
            Err(code) => Err(io_error(file, "stat", file.file_name(), code, false)),
        }
    }

    /// What a write checks, right before its rename, to know the file is still the one
    /// it read (see [`read_fingerprinted`](Self::read_fingerprinted)).
    fn fingerprint(&self, file: MemoryFile) -> Result<Fingerprint, StoreError> {
        Ok(Fingerprint::of(self.stat(file)?.as_ref()))
    }

    /// The file's exact bytes; empty when it does not exist. Never more than the file's
    /// read limit: a larger file is `too-large`, whether the stat or the read finds it.
    pub fn read(&self, file: MemoryFile) -> Result<Vec<u8>, StoreError> {
        self.read_fingerprinted(file).map(|(bytes, _)| bytes)
    }

    /// [`read`](Self::read), and the file's fingerprint as the read began, for a writer
    /// under the lock: a writer outside the store's lock (git rewriting the work tree, an
    /// editor) changes it, and our rename would then undo that writer's bytes or build on
    /// half of them, so [`replace`](Self::replace) refuses instead. The fingerprint is the
    /// opened file's, taken before its bytes are read, so a change during the read is
    /// caught too.
    pub fn read_fingerprinted(
        &self,
        file: MemoryFile,
    ) -> Result<(Vec<u8>, Fingerprint), StoreError> {
        let (Some(dir), Some(stat)) = (self.dir(file), self.stat(file)?) else {
            return Ok((Vec::new(), Fingerprint(None)));
        };
        let limit = file.read_limit();
        if stat.size > limit {
            return Err(StoreError::TooLarge {
                file,
                size: stat.size,
            });
        }
        let fd = dir
            .open_at(
                PathFlags::empty(),
                file.file_name(),
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )
            .map_err(|code| match code {
                // Swapped for a link or a special file since the stat.
                ErrorCode::Loop | ErrorCode::NotPermitted => StoreError::NotARegularFile { file },
                code => io_error(file, "open", file.file_name(), code, false),
            })?;
        // What was opened, checked again: the name may have been swapped since the stat.
        let opened = fd
            .stat()
            .map_err(|c| io_error(file, "stat", file.file_name(), c, false))?;
        if opened.type_ != DescriptorType::RegularFile || opened.link_count > 1 {
            return Err(StoreError::NotARegularFile { file });
        }
        let fingerprint = Fingerprint::of(Some(&opened));
        if opened.size > limit {
            return Err(StoreError::TooLarge {
                file,
                size: opened.size,
            });
        }
        let mut bytes = Vec::new();
        loop {
            // One byte past the limit is enough to know the file grew beyond it.
            let want = READ_CHUNK.min(limit + 1 - bytes.len() as u64);
            let (chunk, end) = fd
                .read(want, bytes.len() as u64)
                .map_err(|code| io_error(file, "read", file.file_name(), code, false))?;
            bytes.extend_from_slice(&chunk);
            if bytes.len() as u64 > limit {
                return Err(StoreError::TooLarge {
                    file,
                    size: bytes.len() as u64,
                });
            }
            // A short read that completes the size the open file had is its end: asking
            // again only to be told so would be a second host call on every read.
            let complete = (chunk.len() as u64) < want && bytes.len() as u64 == opened.size;
            if end || chunk.is_empty() || complete {
                return Ok((bytes, fingerprint));
            }
        }
    }

    /// Takes the cross-process write lock on `file` (see `lock.rs`), then clears out what
    /// dead or deposed writers left, before anything is read under the new lock. A holder
    /// that stalled past its lease may still be about to rename its temporary file in:
    /// once that file is removed it cannot, and if its rename landed first, the read that
    /// follows sees it, so its write is the base of ours rather than lost.
    pub fn lock(&self, file: MemoryFile) -> Result<WriteLock<'_>, StoreError> {
        let dir = self.writable(file)?;
        let lock = WriteLock::acquire(dir, file, self.owner(), self.read_only_mount)?;
        remove_leftovers(dir, file, lock.dated());
        Ok(lock)
    }

    fn writable(&self, file: MemoryFile) -> Result<&Descriptor, StoreError> {
        self.dir(file).ok_or_else(|| StoreError::Io {
            file,
            message: match file {
                MemoryFile::GlobalUser => {
                    "global user memory is off: the host pre-opened no ~/.metis directory to write into"
                }
                _ => "the host pre-opened no .metis directory to write into",
            }
            .into(),
        })
    }

    /// Makes `bytes` the file's content atomically, under `lock`: a new temporary file
    /// in `.metis/` (exclusive create), written and synced, renamed over the file if the
    /// lock is still ours, then the directory synced. A reader sees the old or the new
    /// bytes, never a mix; on any error the temporary file is removed and the file is as
    /// it was. `Some(code)`: the file was replaced but the directory sync failed.
    pub fn replace(
        &self,
        file: MemoryFile,
        bytes: &[u8],
        lock: &WriteLock<'_>,
        read: &Fingerprint,
    ) -> Result<Option<ErrorCode>, StoreError> {
        let dir = self.writable(file)?;
        let (temp_name, temp) = create_temp(dir, file, self.owner(), self.read_only_mount)?;
        let written = write_all(&temp, bytes)
            .and_then(|()| temp.sync())
            .map_err(|code| {
                io_error(
                    file,
                    "write a temporary file for",
                    file.file_name(),
                    code,
                    self.read_only_mount,
                )
            });
        drop(temp);
        let renamed = written
            .and_then(|()| lock.check_can_commit())
            .and_then(|()| match self.fingerprint(file)? == *read {
                true => Ok(()),
                false => Err(StoreError::Busy { file }),
            })
            .and_then(|()| {
                put_in_place(dir, &temp_name, file.file_name(), read.0.is_none()).map_err(|code| {
                    match code {
                        ErrorCode::IsDirectory => StoreError::NotARegularFile { file },
                        // Our temporary file is gone: we stalled past our lease after the
                        // commit check, and the writer who broke the lock cleaned it up.
                        // Nothing was written; another process has the file.
                        ErrorCode::NoEntry => StoreError::Busy { file },
                        // A writer outside the lock created the file since we found none.
                        ErrorCode::Exist => StoreError::Busy { file },
                        code => io_error(
                            file,
                            "replace",
                            file.file_name(),
                            code,
                            self.read_only_mount,
                        ),
                    }
                })
            });
        if let Err(error) = renamed {
            let _ = dir.unlink_file_at(&temp_name);
            return Err(error);
        }
        // The new bytes are in place; syncing the directory makes the rename durable. A
        // failure here cannot undo the write: the caller is told the write is in place
        // but may not survive a crash (`unsynced`), never that it succeeded.
        Ok(sync_dir(dir).err())
    }
}

/// Puts the temporary file `temp` in place as `name`. Over a file we read, a rename (a
/// reader sees the old bytes or the new). Where we found no file, a hard link, which
/// fails if one was created since: a writer outside the lock (git's checkout: it unlinks
/// the file, then creates it anew) may create it between our last look and our rename,
/// and a rename would replace its whole file with our one entry. The temporary name is
/// then removed; until it is, the file has two links, which a reader takes for a file
/// that is not ours for a moment. Where hard links are refused, the rename.
fn put_in_place(
    dir: &Descriptor,
    temp: &str,
    name: &str,
    was_missing: bool,
) -> Result<(), ErrorCode> {
    if was_missing {
        match dir.link_at(PathFlags::empty(), temp, dir, name) {
            Ok(()) => {
                let _ = dir.unlink_file_at(temp);
                return Ok(());
            }
            // Where hard links are refused (vfat, exFAT, SMB mounts), as the lock's are.
            Err(
                ErrorCode::NotPermitted
                | ErrorCode::CrossDevice
                | ErrorCode::Unsupported
                | ErrorCode::TooManyLinks,
            ) => {}
            Err(code) => return Err(code),
        }
    }
    dir.rename_at(temp, dir, name)
}

/// A file's size and dates (`None`: missing): what a writer outside the lock changes.
#[derive(PartialEq, Eq)]
pub struct Fingerprint(Option<(u64, Date, Date)>);

/// A file date as WASI gives it: seconds and nanoseconds, if the filesystem keeps it.
type Date = Option<(u64, u32)>;

impl Fingerprint {
    fn of(stat: Option<&DescriptorStat>) -> Self {
        let at =
            |t: Option<wasip2::clocks::wall_clock::Datetime>| t.map(|t| (t.seconds, t.nanoseconds));
        Fingerprint(stat.map(|stat| {
            (
                stat.size,
                at(stat.data_modification_timestamp),
                at(stat.status_change_timestamp),
            )
        }))
    }
}

fn create_temp(
    dir: &Descriptor,
    file: MemoryFile,
    owner: u64,
    read_only_mount: bool,
) -> Result<(String, Descriptor), StoreError> {
    // Named after this call's owner token, so a host can remove it after a trap. A name
    // collision is retried with random bits rather than ever opening an existing file.
    let mut last = ErrorCode::Exist;
    for attempt in 0..8 {
        let token = if attempt == 0 {
            owner
        } else {
            wasip2::random::random::get_random_u64()
        };
        let name = temp_name(file, token);
        match dir.open_at(
            PathFlags::empty(),
            &name,
            OpenFlags::CREATE | OpenFlags::EXCLUSIVE,
            DescriptorFlags::WRITE,
        ) {
            Ok(fd) => return Ok((name, fd)),
            Err(ErrorCode::Exist) => continue,
            Err(code) => {
                last = code;
                break;
            }
        }
    }
    Err(io_error(
        file,
        "create a temporary file for",
        file.file_name(),
        last,
        read_only_mount,
    ))
}

/// Removes what crashed or trapped writers of `file` left behind. Only the lock holder
/// writes temporary files, so under the lock every one is stale; a pending lock file is
/// another writer's attempt in progress unless it is older than a lease; a break lock
/// older than its own lease belongs to a breaker that died (which no later waiter would
/// otherwise look at, since it only looks when it finds the lock stale). Ages are judged
/// against `now`, the date our lock was just given: the filesystem's clock, not ours.
fn remove_leftovers(dir: &Descriptor, file: MemoryFile, now: Option<u64>) {
    // Listed through a descriptor of `.` opened under the preopen: preview2-shim refuses
    // to list the preopen's own descriptor (`bad-descriptor`), so under Node nothing a
    // crashed writer left would ever be removed. The preopen itself is the fallback.
    let here = dir.open_at(
        PathFlags::empty(),
        ".",
        OpenFlags::DIRECTORY,
        DescriptorFlags::READ,
    );
    let listed = match &here {
        Ok(here) => here.read_directory().or_else(|_| dir.read_directory()),
        Err(_) => dir.read_directory(),
    };
    let Ok(entries) = listed else {
        return;
    };
    while let Ok(Some(entry)) = entries.read_directory_entry() {
        let stale = |lease| is_stale(dir, &entry.name, lease, now);
        if is_temp_of(file, &entry.name)
            || (is_pending_lock_of(file, &entry.name) && stale(LEASE_NANOS))
            || (entry.name == break_lock_name(file) && stale(BREAK_LEASE_NANOS))
            || (is_aside_of(file, &entry.name) && stale(LEASE_NANOS))
        {
            let _ = dir.unlink_file_at(&entry.name);
        }
    }
}

/// Syncs `.metis/` through a descriptor of `.` opened under the preopen: some runtimes
/// refuse `sync` on the preopen's own descriptor (preview2-shim answers `invalid`), none
/// on a directory opened from it. The preopen itself is the fallback. A filesystem that
/// cannot sync a directory at all (`invalid`, `unsupported` either way) is not an error:
/// there is nothing more to do on it; any other failure is.
fn sync_dir(dir: &Descriptor) -> Result<(), ErrorCode> {
    let cannot = |code: &ErrorCode| {
        matches!(
            code,
            ErrorCode::Invalid | ErrorCode::Unsupported | ErrorCode::BadDescriptor
        )
    };
    let synced = dir
        .open_at(
            PathFlags::empty(),
            ".",
            OpenFlags::DIRECTORY,
            DescriptorFlags::READ,
        )
        .and_then(|here| here.sync());
    match synced {
        Err(code) if cannot(&code) => match dir.sync() {
            Err(code) if !cannot(&code) => Err(code),
            _ => Ok(()),
        },
        other => other,
    }
}

fn write_all(fd: &Descriptor, mut bytes: &[u8]) -> Result<(), ErrorCode> {
    let mut offset = 0;
    while !bytes.is_empty() {
        let n = fd.write(bytes, offset)?;
        if n == 0 {
            return Err(ErrorCode::InsufficientSpace);
        }
        offset += n;
        bytes = &bytes[n as usize..];
    }
    Ok(())
}
