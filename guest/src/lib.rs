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
    AuditPolicy, ComposedPrompt, Edit, Guest, GuestWriteHold, Landing, PromptSource, SessionPrompt,
    SessionUpdate, ShownFile, WriteHold,
};
use metis::memory::types::{
    AuditFinding, ChangedInfo, FlaggedInfo, HardCapExceededInfo, InvalidUtf8Info, MemoryFile,
    PoisonedInfo, Session, StoreError, TooLargeInfo, UnsyncedInfo, WriteResult,
};

struct Component;

impl Guest for Component {
    type WriteHold = Hold;

    fn read(file: MemoryFile) -> Result<String, StoreError> {
        Ok(read_text(&MetisDir::open(), file.into())?)
    }

    fn exists(file: MemoryFile) -> Result<bool, StoreError> {
        Ok(MetisDir::open().stat(file.into())?.is_some())
    }

    fn size_bytes(file: MemoryFile) -> Result<u64, StoreError> {
        Ok(MetisDir::open().stat(file.into())?.map_or(0, |s| s.size))
    }

    fn add_entry(file: MemoryFile, entry: String) -> Result<WriteResult, StoreError> {
        write(file, core::Edit::Add { entry: &entry })
    }

    fn replace(
        file: MemoryFile,
        old_text: String,
        new_text: String,
    ) -> Result<WriteResult, StoreError> {
        write(
            file,
            core::Edit::Replace {
                old: &old_text,
                new: &new_text,
            },
        )
    }

    fn consolidate(file: MemoryFile, content: String) -> Result<WriteResult, StoreError> {
        write(file, core::Edit::Consolidate { content: &content })
    }

    fn consolidate_if_unchanged(
        file: MemoryFile,
        content: String,
        expected_hash: String,
    ) -> Result<WriteResult, StoreError> {
        write(
            file,
            core::Edit::ConsolidateIfUnchanged {
                content: &content,
                expected_hash: &expected_hash,
            },
        )
    }

    fn write_scanned(file: MemoryFile, edit: Edit) -> Result<WriteResult, StoreError> {
        let edit = match &edit {
            Edit::AddEntry(entry) => core::Edit::Add { entry },
            Edit::Replace(r) => core::Edit::Replace {
                old: &r.old_text,
                new: &r.new_text,
            },
            Edit::Consolidate(content) => core::Edit::Consolidate { content },
            Edit::ConsolidateIfUnchanged(c) => core::Edit::ConsolidateIfUnchanged {
                content: &c.content,
                expected_hash: &c.expected_hash,
            },
        };
        let added = core::tool_call::added_text(&edit);
        let core_file = core::MemoryFile::from(file);
        let vet = |before: &[u8], after: &str| {
            core::tool_call::scan_write(added, before, after, core::scan::ScanPolicy::ALL).map_err(
                |blamed| core::StoreError::Poisoned {
                    file: core_file,
                    rule: blamed.finding.id.into(),
                    message: core::scan_refusal(&blamed, core_file),
                },
            )
        };
        let dir = write_dirs();
        let mut held = None;
        write_file(&dir, &mut held, core_file, edit, vet)
            .map(Into::into)
            .map_err(Into::into)
    }

    fn recover_after_trap() -> Landing {
        let metis = MetisDir::open();
        let current = |file| metis.read(file).ok().map(|bytes| core::sha256_hex(&bytes));
        let files: Vec<core::lock::Landing> = metis
            .descriptors()
            .flat_map(|(dir, files)| lock::recover_after_trap(dir, files, current))
            .map(|(_, landed)| landed)
            .collect();
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
        // `compose-system-prompt` without the audit (a host calls this on every model
        // call): the files read and checked in the prompt's order, as there.
        if settings::prompt_layout() == core::PromptLayout::default() {
            let dir = MetisDir::open();
            let user = core::into_text(core::MemoryFile::User, dir.read(core::MemoryFile::User)?)?;
            let memory = core::into_text(
                core::MemoryFile::Memory,
                dir.read(core::MemoryFile::Memory)?,
            )?;
            return Ok(core::assemble_system_prompt(&base, &user, &memory));
        }
        // Not `compose`: that leaves a file that is not text out, and this call's
        // contract is to fail on one.
        let dir = MetisDir::open();
        Ok(core::assemble_in_layout(
            &base,
            |file| dir.read(file),
            prompt_layout(&dir),
        )?)
    }

    fn compose_system_prompt(
        base: String,
        audit: AuditPolicy,
    ) -> Result<ComposedPrompt, StoreError> {
        Ok(composed_prompt(compose(&base, audit)?))
    }

    fn compose_session_prompt(
        base: String,
        audit: AuditPolicy,
    ) -> Result<SessionPrompt, StoreError> {
        let composed = compose(&base, audit)?;
        let session = core::session::Session::from_prompt(&composed.sources);
        Ok(SessionPrompt {
            prompt: composed_prompt(composed),
            session: session.into(),
        })
    }

    fn memory_update(session: Session, audit: AuditPolicy) -> Result<SessionUpdate, StoreError> {
        let dir = MetisDir::open();
        let mut session = core::session::Session::from(session);
        let text = session.update(
            |file| dir.read(file),
            audit_policy(audit),
            prompt_layout(&dir),
        )?;
        Ok(SessionUpdate {
            text,
            session: session.into(),
        })
    }

    fn show_file(
        file: MemoryFile,
        session: Session,
        audit: AuditPolicy,
    ) -> Result<ShownFile, StoreError> {
        look(file, session, audit, core::session::Showing::AsToolResult)
    }

    fn offer_file(
        file: MemoryFile,
        session: Session,
        audit: AuditPolicy,
    ) -> Result<ShownFile, StoreError> {
        look(file, session, audit, core::session::Showing::Offered)
    }

    fn audit(file: MemoryFile) -> Result<Vec<AuditFinding>, StoreError> {
        let text = read_text(&MetisDir::open(), file.into())?;
        Ok(findings(core::audit::audit(&text)))
    }

    fn describe_error(file: MemoryFile, error: StoreError) -> String {
        to_core_error(file.into(), error).to_string()
    }
}

/// One file read fresh and audited for `session`'s model: seen as `showing` says,
/// withheld if the audit keeps it out.
fn look(
    file: MemoryFile,
    session: Session,
    audit: AuditPolicy,
    showing: core::session::Showing,
) -> Result<ShownFile, StoreError> {
    let text = read_text(&MetisDir::open(), file.into())?;
    let mut session = core::session::Session::from(session);
    let (found, withheld) = session.look(file.into(), &text, audit_policy(audit), showing);
    Ok(ShownFile {
        text,
        findings: findings(found),
        withheld,
        session: session.into(),
    })
}

fn compose(base: &str, audit: AuditPolicy) -> Result<core::ComposedPrompt, core::StoreError> {
    let dir = MetisDir::open();
    core::compose_system_prompt(
        base,
        |file| dir.read(file),
        audit_policy(audit),
        prompt_layout(&dir),
    )
}

fn audit_policy(audit: AuditPolicy) -> core::audit::AuditPolicy {
    match audit {
        AuditPolicy::Off => core::audit::AuditPolicy::Off,
        AuditPolicy::Report => core::audit::AuditPolicy::Report,
        AuditPolicy::Omit => core::audit::AuditPolicy::Omit,
        AuditPolicy::Refuse => core::audit::AuditPolicy::Refuse,
    }
}

fn prompt_layout(dir: &MetisDir) -> core::PromptLayout {
    let mut layout = settings::prompt_layout();
    // At home the user's own USER.md is the workspace's: it is shown once.
    layout.global_user &= !dir.global_is_workspace();
    layout
}

fn composed_prompt(composed: core::ComposedPrompt) -> ComposedPrompt {
    ComposedPrompt {
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

fn write(file: MemoryFile, edit: core::Edit<'_>) -> Result<WriteResult, StoreError> {
    let dir = write_dirs();
    let mut held = None;
    write_file(&dir, &mut held, file.into(), edit, |_, _| {
        Ok::<(), core::StoreError>(())
    })
    .map(Into::into)
    .map_err(Into::into)
}

/// The file a tool call's `USER.md` is, by the core's rule: the fact it needs, whether
/// the workspace's `.metis/` is the user's own, is the pre-opened directories' own, so no
/// host can get it wrong.
pub(crate) fn user_file() -> core::global_user::UserFile {
    core::global_user::tool_user_file(
        settings::global_user_mode(),
        MetisDir::open().global_is_workspace(),
    )
}

/// The lock of the write a call made, kept by the call: `write_file` leaves it in the
/// caller's `held`, declared after the directory it borrows, so it is released when the
/// call's frame ends, after the call has built everything it returns, on every path. A
/// trap before then is told apart by the lock (`recover-after-trap` reads the write's
/// intent in it), so the release is the call's last step.
pub(crate) type Held<'d> = Option<lock::WriteLock<'d>>;

/// The directories a write call uses, never closed by the call: closing a descriptor is a
/// host call, and one made after the lock's release (the write's last trace) could trap
/// with the write landed but no longer found by `recover-after-trap`. A write's instance
/// serves one call, so they close with it.
pub(crate) fn write_dirs() -> ::core::mem::ManuallyDrop<MetisDir> {
    ::core::mem::ManuallyDrop::new(MetisDir::open())
}

/// The one write path of the store and the tools: one read, the core's decision, and
/// an atomic replace.
///
/// `vet` sees the file's bytes and the new content before it is written and may refuse
/// it (the tools' scan).
fn write_file<'d, E: From<core::StoreError>>(
    dir: &'d MetisDir,
    held: &mut Held<'d>,
    file: core::MemoryFile,
    edit: core::Edit<'_>,
    vet: impl FnOnce(&[u8], &str) -> Result<(), E>,
) -> Result<core::WriteResult, E> {
    if settings::read_only() {
        return Err(core::StoreError::ReadOnly {
            file,
            message: "this workspace was opened read-only; nothing was written".into(),
        }
        .into());
    }
    // The lock is taken when the edit first needs the file, so checks that come before
    // the read (an empty entry, an oversized consolidate) never wait for it.
    let mut lock = None;
    let planned = core::plan_write(file, edit, || {
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
    fn acquire() -> Result<WriteHold, StoreError> {
        let dir: &'static MetisDir =
            alloc::boxed::Box::leak(alloc::boxed::Box::new(MetisDir::open()));
        if settings::read_only() {
            return Err(core::StoreError::ReadOnly {
                file: core::MemoryFile::Memory,
                message: "this workspace was opened read-only; nothing can be held".into(),
            }
            .into());
        }
        let mut locks = Vec::new();
        for file in core::MemoryFile::ALL {
            locks.push(dir.lock(file)?);
        }
        Ok(WriteHold::new(Hold(::core::cell::RefCell::new(locks))))
    }

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
        match error {
            E::HardCapExceeded {
                file,
                attempted,
                cap,
            } => StoreError::HardCapExceeded(HardCapExceededInfo {
                file: file.into(),
                attempted_bytes: attempted,
                cap_bytes: cap,
            }),
            E::EmptyEntry => StoreError::EmptyEntry,
            E::NothingToReplace { .. } => StoreError::NothingToReplace,
            E::NotFound { .. } => StoreError::NotFound,
            E::NotUnique { count, .. } => StoreError::NotUnique(count),
            E::InvalidUtf8 { file, offset } => StoreError::InvalidUtf8(InvalidUtf8Info {
                file: file.into(),
                offset,
            }),
            E::NotARegularFile { file } => StoreError::NotARegularFile(file.into()),
            E::Busy { .. } => StoreError::Busy,
            E::Io { message, .. } => StoreError::Io(message),
            E::ReadOnly { message, .. } => StoreError::ReadOnly(message),
            E::FileTooLarge { message, .. } => StoreError::FileTooLarge(message),
            E::InsufficientSpace { message, .. } => StoreError::InsufficientSpace(message),
            E::Changed {
                file,
                expected_hash,
                current_hash,
                current,
            } => StoreError::Changed(ChangedInfo {
                file: file.into(),
                expected_hash,
                current_hash,
                current_content: core::changed_content(file, &current),
            }),
            E::TooLarge { file, size } => StoreError::TooLarge(TooLargeInfo {
                file: file.into(),
                size_bytes: size,
                limit_bytes: file.read_limit(),
            }),
            E::Unsynced { result, reason } => StoreError::Unsynced(UnsyncedInfo {
                result: result.into(),
                reason,
            }),
            E::Poisoned {
                file,
                rule,
                message,
            } => StoreError::Poisoned(PoisonedInfo {
                file: file.into(),
                rule,
                message,
            }),
            E::Flagged { file, findings: f } => StoreError::Flagged(FlaggedInfo {
                file: file.into(),
                findings: findings(f),
            }),
        }
    }
}

/// The core error for a WIT error about `file`; payloads that name a file win over it.
fn to_core_error(file: core::MemoryFile, error: StoreError) -> core::StoreError {
    use core::StoreError as E;
    match error {
        StoreError::HardCapExceeded(info) => E::HardCapExceeded {
            file: info.file.into(),
            attempted: info.attempted_bytes,
            cap: info.cap_bytes,
        },
        StoreError::EmptyEntry => E::EmptyEntry,
        StoreError::NothingToReplace => E::NothingToReplace { file },
        StoreError::NotFound => E::NotFound { file },
        StoreError::NotUnique(count) => E::NotUnique { file, count },
        StoreError::InvalidUtf8(info) => E::InvalidUtf8 {
            file: info.file.into(),
            offset: info.offset,
        },
        StoreError::NotARegularFile(file) => E::NotARegularFile { file: file.into() },
        StoreError::Busy => E::Busy { file },
        StoreError::Io(message) => E::Io { file, message },
        StoreError::ReadOnly(message) => E::ReadOnly { file, message },
        StoreError::FileTooLarge(message) => E::FileTooLarge { file, message },
        StoreError::InsufficientSpace(message) => E::InsufficientSpace { file, message },
        StoreError::Changed(info) => E::Changed {
            file: info.file.into(),
            expected_hash: info.expected_hash,
            current_hash: info.current_hash,
            current: info.current_content.into_bytes(),
        },
        StoreError::TooLarge(info) => E::TooLarge {
            file: info.file.into(),
            size: info.size_bytes,
        },
        StoreError::Unsynced(info) => E::Unsynced {
            result: core::WriteResult {
                file: info.result.file.into(),
                before_hash: info.result.before_hash,
                after_hash: info.result.after_hash,
                before_size_bytes: info.result.before_size_bytes,
                after_size_bytes: info.result.after_size_bytes,
                over_soft_cap: info.result.over_soft_cap,
                over_hard_cap: info.result.over_hard_cap,
            },
            reason: info.reason,
        },
        StoreError::Poisoned(info) => E::Poisoned {
            file: info.file.into(),
            rule: info.rule,
            message: info.message,
        },
        StoreError::Flagged(info) => E::Flagged {
            file: info.file.into(),
            findings: info
                .findings
                .into_iter()
                .map(|f| core::audit::AuditFinding {
                    line: f.line,
                    rule: f.rule,
                    detail: f.detail,
                })
                .collect(),
        },
    }
}

export!(Component);
