//! The metis-memory component: the `store` interface of `wit/`, implemented as the pure
//! decisions of `metis-memory-core` around one read and one atomic write through WASI.

#![no_std]

extern crate alloc;

mod errors;
mod fs;
mod lock;
mod no_std;
mod session;
mod settings;
mod tools;

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use fs::MetisDir;
use metis_memory_core as core;

wit_bindgen::generate!({
    path: "../wit",
    world: "memory",
});

use exports::metis::memory::store::{
    AuditPolicy, ComposeOptions, ComposedPrompt, Edit, Guest, GuestWorkspace, GuestWriteHold,
    Landing, PromptSource, SessionUpdate, ShownFile, WriteHold, WriteOptions,
};
use metis::memory::types::{
    AuditFinding, CapExceeded, Changed, FileError, Flagged, InvalidUtf8, MemoryFile, NotUnique,
    Poisoned, ScanPolicy, Session, StoreError, TooLarge, Unsynced, WriteResult,
};
use settings::Settings;

struct Component;

impl Guest for Component {
    type Workspace = Workspace;
    type WriteHold = Hold;

    fn read(file: MemoryFile) -> Result<String, StoreError> {
        Ok(read_text(
            &MetisDir::open(&Settings::default()),
            file.into(),
        )?)
    }

    fn exists(file: MemoryFile) -> Result<bool, StoreError> {
        Ok(MetisDir::open(&Settings::default())
            .stat(file.into())?
            .is_some())
    }

    fn size_bytes(file: MemoryFile) -> Result<u64, StoreError> {
        Ok(MetisDir::open(&Settings::default())
            .stat(file.into())?
            .map_or(0, |s| s.size))
    }

    fn add_entry(file: MemoryFile, entry: String) -> Result<WriteResult, StoreError> {
        Workspace::default().write(file, Edit::AddEntry(entry), PLAIN_WRITE)
    }

    fn replace(
        file: MemoryFile,
        old_text: String,
        new_text: String,
    ) -> Result<WriteResult, StoreError> {
        let replacement = exports::metis::memory::store::Replacement { old_text, new_text };
        Workspace::default().write(file, Edit::Replace(replacement), PLAIN_WRITE)
    }

    fn consolidate(file: MemoryFile, content: String) -> Result<WriteResult, StoreError> {
        Workspace::default().write(file, Edit::Consolidate(content), PLAIN_WRITE)
    }

    fn recover_after_trap(owner: u64) -> Landing {
        let metis = MetisDir::open(&Settings::default());
        let current = |file| metis.read(file).ok().map(|bytes| core::sha256_hex(&bytes));
        // Plain loops rather than an iterator chain: the same order, less code.
        let mut files: Vec<core::lock::Landing> = Vec::new();
        for (dir, names) in metis.descriptors() {
            for (_, landed) in lock::recover_after_trap(dir, names, current, owner) {
                files.push(landed);
            }
        }
        match core::lock::call_landing(&files) {
            core::lock::Landing::Untraced => Landing::Untraced,
            core::lock::Landing::NotWritten => Landing::NotWritten,
            core::lock::Landing::Written => Landing::Written,
        }
    }

    fn soft_cap(file: MemoryFile) -> u64 {
        core::MemoryFile::from(file).soft_cap()
    }

    fn hard_cap(file: MemoryFile) -> u64 {
        core::MemoryFile::from(file).hard_cap()
    }

    fn assemble_system_prompt(base: String) -> Result<String, StoreError> {
        // `core::compose_strict` in the default layout, without the audit and without
        // hashing the files for a session's sources, which a host calling this on every
        // model call has no use for: the files read and checked in the prompt's order, as
        // there, and a file that is not text fails the call.
        let dir = MetisDir::open(&Settings::default());
        let user = core::into_text(core::MemoryFile::User, dir.read(core::MemoryFile::User)?)?;
        let memory = core::into_text(
            core::MemoryFile::Memory,
            dir.read(core::MemoryFile::Memory)?,
        )?;
        Ok(core::assemble_system_prompt(&base, &user, &memory))
    }

    fn audit(file: MemoryFile) -> Result<Vec<AuditFinding>, StoreError> {
        let text = read_text(&MetisDir::open(&Settings::default()), file.into())?;
        Ok(findings(core::audit::audit(&text)))
    }
}

/// The plain write: no version required, no scan.
const PLAIN_WRITE: WriteOptions = WriteOptions {
    if_unchanged: None,
    scan: ScanPolicy {
        invisible_characters: false,
        injection_patterns: false,
    },
};

/// A workspace as its host configured it (`store.workspace`).
#[derive(Default)]
pub struct Workspace(Settings);

impl Workspace {
    pub(crate) fn settings(&self) -> &Settings {
        &self.0
    }

    fn open(&self) -> MetisDir {
        MetisDir::open(&self.0)
    }

    /// The prompt's layout: global user memory, and the budget in the headings.
    fn prompt_layout(&self, dir: &MetisDir) -> core::PromptLayout {
        let mut layout = self.0.prompt_layout();
        // At home the user's own USER.md is the workspace's: it is shown once.
        layout.global_user &= !dir.global_is_workspace();
        layout
    }

    /// The file a tool call's `USER.md` is, by the core's rule: the fact it needs,
    /// whether the workspace's `.metis/` is the user's own, is the pre-opened
    /// directories' own, so no host can get it wrong.
    pub(crate) fn user_file(&self, dir: &MetisDir) -> core::global_user::UserFile {
        core::global_user::tool_user_file(self.0.global_user, dir.global_is_workspace())
    }

    /// The directories a write call uses, never closed by the call: closing a descriptor
    /// is a host call, and one made after the lock's release (the write's last trace)
    /// could trap with the write landed but no longer found by `recover-after-trap`. A
    /// write's instance serves one call, so they close with it.
    pub(crate) fn write_dirs(&self) -> ::core::mem::ManuallyDrop<MetisDir> {
        ::core::mem::ManuallyDrop::new(self.open())
    }
}

impl GuestWorkspace for Workspace {
    fn new(settings: exports::metis::memory::store::Settings) -> Self {
        Workspace(settings.into())
    }

    fn write(
        &self,
        file: MemoryFile,
        edit: Edit,
        options: WriteOptions,
    ) -> Result<WriteResult, StoreError> {
        let edit = match &edit {
            Edit::AddEntry(entry) => core::Edit::Add { entry },
            Edit::Replace(r) => core::Edit::Replace {
                old: &r.old_text,
                new: &r.new_text,
            },
            Edit::Consolidate(content) => core::Edit::Consolidate { content },
        };
        let core_file = core::MemoryFile::from(file);
        let added = core::tool_call::added_text(&edit);
        let policy = scan_policy(options.scan);
        let vet = |before: &[u8], after: &str| {
            core::tool_call::scan_write(added, before, after, policy).map_err(|blamed| {
                core::StoreError::Poisoned {
                    file: core_file,
                    rule: blamed.finding.id.into(),
                    message: core::scan_refusal(&blamed, core_file),
                }
            })
        };
        let dir = self.write_dirs();
        let mut held = None;
        write_file(
            self.settings(),
            &dir,
            &mut held,
            core_file,
            edit,
            options.if_unchanged.as_deref(),
            vet,
        )
        .map(Into::into)
        .map_err(Into::into)
    }

    fn compose(&self, base: String, options: ComposeOptions) -> Result<ComposedPrompt, StoreError> {
        let dir = self.open();
        // Strict: a file that is not text fails the call, as `assemble-system-prompt`
        // does, instead of being left out with a note.
        let compose = match options.strict {
            true => core::compose_strict,
            false => core::compose_system_prompt,
        };
        let composed = compose(
            &base,
            |file| dir.read(file),
            audit_policy(options.audit),
            self.prompt_layout(&dir),
        )?;
        let session = core::session::Session::from_prompt(&composed.sources);
        Ok(ComposedPrompt {
            text: composed.text,
            sources: composed
                .sources
                .into_iter()
                .map(|source| PromptSource {
                    file: source.file.into(),
                    sha256: source.sha256,
                    size_bytes: source.size_bytes,
                    included: source.included,
                    findings: findings(source.findings),
                })
                .collect(),
            session: session.into(),
        })
    }

    fn update(&self, session: Session, audit: AuditPolicy) -> Result<SessionUpdate, StoreError> {
        let dir = self.open();
        let mut session = core::session::Session::from(session);
        let text = session.update(
            |file| dir.read(file),
            audit_policy(audit),
            self.prompt_layout(&dir),
        )?;
        Ok(SessionUpdate {
            text,
            session: session.into(),
        })
    }

    fn show(
        &self,
        file: MemoryFile,
        session: Session,
        audit: AuditPolicy,
        whole: bool,
    ) -> Result<ShownFile, StoreError> {
        let showing = match whole {
            true => core::session::Showing::AsToolResult,
            false => core::session::Showing::Offered,
        };
        let text = read_text(&self.open(), file.into())?;
        let mut session = core::session::Session::from(session);
        let (found, withheld) = session.look(file.into(), &text, audit_policy(audit), showing);
        Ok(ShownFile {
            text,
            findings: findings(found),
            withheld,
            session: session.into(),
        })
    }

    fn hold_writes(&self) -> Result<WriteHold, StoreError> {
        if self.0.read_only {
            return Err(core::StoreError::ReadOnly {
                file: core::MemoryFile::Memory,
                message: "this workspace was opened read-only; nothing can be held".into(),
            }
            .into());
        }
        // The hold outlives this call: its directory lives as long as the instance.
        let dir: &'static MetisDir = alloc::boxed::Box::leak(alloc::boxed::Box::new(self.open()));
        let mut locks = Vec::new();
        for file in core::MemoryFile::ALL {
            locks.push(dir.lock(file)?);
        }
        Ok(WriteHold::new(Hold(::core::cell::RefCell::new(locks))))
    }
}

pub(crate) fn scan_policy(policy: ScanPolicy) -> core::scan::ScanPolicy {
    core::scan::ScanPolicy {
        invisible_characters: policy.invisible_characters,
        injection_patterns: policy.injection_patterns,
    }
}

fn audit_policy(audit: AuditPolicy) -> core::audit::AuditPolicy {
    match audit {
        AuditPolicy::Off => core::audit::AuditPolicy::Off,
        AuditPolicy::Report => core::audit::AuditPolicy::Report,
        AuditPolicy::Omit => core::audit::AuditPolicy::Omit,
        AuditPolicy::Refuse => core::audit::AuditPolicy::Refuse,
    }
}

fn read_text(dir: &MetisDir, file: core::MemoryFile) -> Result<String, core::StoreError> {
    core::into_text(file, dir.read(file)?)
}

fn findings(found: Vec<core::audit::AuditFinding>) -> Vec<AuditFinding> {
    found
        .into_iter()
        .map(|f| AuditFinding {
            line: f.line,
            rule: f.rule,
            detail: f.detail,
        })
        .collect()
}

/// The lock of the write a call made, kept by the call: `write_file` leaves it in the
/// caller's `held`, declared after the directory it borrows, so it is released when the
/// call's frame ends, after the call has built everything it returns, on every path. A
/// trap before then is told apart by the lock (`recover-after-trap` reads the write's
/// intent in it), so the release is the call's last step.
pub(crate) type Held<'d> = Option<lock::WriteLock<'d>>;

/// The one write path of the store and the tools: one read, the core's decision, and
/// an atomic replace.
///
/// `if_unchanged`: the version the file must still be, compared under the lock as soon
/// as it is read. `vet` sees the file's bytes and the new content before it is written
/// and may refuse it (the poisoning scan).
pub(crate) fn write_file<'d, E: From<core::StoreError>>(
    settings: &Settings,
    dir: &'d MetisDir,
    held: &mut Held<'d>,
    file: core::MemoryFile,
    edit: core::Edit<'_>,
    if_unchanged: Option<&str>,
    vet: impl FnOnce(&[u8], &str) -> Result<(), E>,
) -> Result<core::WriteResult, E> {
    if settings.read_only {
        return Err(core::StoreError::ReadOnly {
            file,
            message: "this workspace was opened read-only; nothing was written".into(),
        }
        .into());
    }
    // The lock is taken when the edit first needs the file, so checks that come before
    // the read (an empty entry, an oversized consolidate) never wait for it.
    let mut lock = None;
    let planned = core::plan_write(file, edit, if_unchanged, || {
        let held = dir.lock(file)?;
        let (bytes, read) = dir.read_fingerprinted(file)?;
        lock = Some((held, read));
        Ok(bytes)
    })?;
    let (lock, read) = lock.ok_or_else(|| core::StoreError::Io {
        file,
        message: "internal: a write was planned without reading the file".into(),
    })?;
    // Every edit's new content is text: the file's text, or the caller's.
    vet(
        &planned.before,
        ::core::str::from_utf8(&planned.after).unwrap_or_default(),
    )?;
    // Everything the caller is told is computed before the rename: once the new bytes
    // are in place, as little as possible remains that could fail or trap.
    let result = planned.result();
    lock.record_intent(&result.after_hash)?;
    let unsynced = dir.replace(file, &planned.after, &lock, &read)?;
    // Releasing the lock removes the last trace of this write that a clean-up after a
    // trap could find, so it is left to the very end of the call (`Held`).
    *held = Some(lock);
    match unsynced {
        None => Ok(result),
        Some(code) => Err(core::StoreError::Unsynced {
            reason: errors::io_reason(code),
            result,
        }
        .into()),
    }
}

/// The workspace's two write locks, held for a host (`store.write-hold`).
pub struct Hold(::core::cell::RefCell<Vec<lock::WriteLock<'static>>>);

impl GuestWriteHold for Hold {
    fn renew(&self) -> Result<(), StoreError> {
        for lock in self.0.borrow_mut().iter_mut() {
            lock.renew()?;
        }
        Ok(())
    }
}

impl From<MemoryFile> for core::MemoryFile {
    fn from(file: MemoryFile) -> Self {
        match file {
            MemoryFile::Memory => core::MemoryFile::Memory,
            MemoryFile::User => core::MemoryFile::User,
            MemoryFile::GlobalUser => core::MemoryFile::GlobalUser,
        }
    }
}

impl From<core::MemoryFile> for MemoryFile {
    fn from(file: core::MemoryFile) -> Self {
        match file {
            core::MemoryFile::Memory => MemoryFile::Memory,
            core::MemoryFile::User => MemoryFile::User,
            core::MemoryFile::GlobalUser => MemoryFile::GlobalUser,
        }
    }
}

impl From<core::WriteResult> for WriteResult {
    fn from(r: core::WriteResult) -> Self {
        WriteResult {
            file: r.file.into(),
            before_hash: r.before_hash,
            after_hash: r.after_hash,
            before_size_bytes: r.before_size_bytes,
            after_size_bytes: r.after_size_bytes,
            over_soft_cap: r.over_soft_cap,
            over_hard_cap: r.over_hard_cap,
        }
    }
}

impl From<core::StoreError> for StoreError {
    fn from(error: core::StoreError) -> Self {
        use core::StoreError as E;
        let message = error.to_string();
        let of = |file: core::MemoryFile| FileError {
            file: file.into(),
            message: message.clone(),
        };
        match error {
            E::HardCapExceeded {
                file,
                attempted,
                cap,
            } => StoreError::HardCapExceeded(CapExceeded {
                file: file.into(),
                message,
                attempted_bytes: attempted,
                cap_bytes: cap,
            }),
            E::EmptyEntry { file } => StoreError::EmptyEntry(of(file)),
            E::NothingToReplace { file } => StoreError::NothingToReplace(of(file)),
            E::NotFound { file } => StoreError::NotFound(of(file)),
            E::NotUnique { file, count } => StoreError::NotUnique(NotUnique {
                file: file.into(),
                message,
                count,
            }),
            E::InvalidUtf8 { file, offset } => StoreError::InvalidUtf8(InvalidUtf8 {
                file: file.into(),
                message,
                offset,
            }),
            E::NotARegularFile { file } => StoreError::NotARegularFile(of(file)),
            E::Busy { file } => StoreError::Busy(of(file)),
            E::Io { file, .. } => StoreError::Io(of(file)),
            E::ReadOnly { file, .. } => StoreError::ReadOnly(of(file)),
            E::FileTooLarge { file, .. } => StoreError::FileTooLarge(of(file)),
            E::InsufficientSpace { file, .. } => StoreError::InsufficientSpace(of(file)),
            E::Changed {
                file,
                expected_hash,
                current_hash,
                current,
            } => StoreError::Changed(Changed {
                file: file.into(),
                message,
                expected_hash,
                current_hash,
                current_content: core::changed_content(file, &current),
            }),
            E::TooLarge { file, size } => StoreError::TooLarge(TooLarge {
                file: file.into(),
                message,
                size_bytes: size,
                limit_bytes: file.read_limit(),
            }),
            E::Unsynced { result, reason } => StoreError::Unsynced(Unsynced {
                message,
                reason,
                result: result.into(),
            }),
            E::Poisoned { file, rule, .. } => StoreError::Poisoned(Poisoned {
                file: file.into(),
                message,
                rule,
            }),
            E::Flagged { file, findings: f } => StoreError::Flagged(Flagged {
                file: file.into(),
                message,
                findings: findings(f),
            }),
        }
    }
}

export!(Component);
