use std::fs::{self, DirBuilder};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime::Store;

use crate::bindings::exports::metis::memory::store::Landing;
use crate::opened::{OpenedDir, identity};
use crate::runtime::{
    Call, Ctx, Instance, KeptFor, KeptInstance, Preopens, Settings, owner_token, with_instance,
};
use crate::{
    AuditFinding, AuditPolicy, CallOptions, CallOutcome, ComposeOptions, ComposedPrompt, Edit,
    Error, GlobalUser, Limits, MemoryFile, Replacement, ScanPolicy, SessionState, SessionUpdate,
    StoreError, ToolDefinition, ToolSuccess, WriteOptions, WriteResult,
};

/// A workspace whose `.metis/` holds the memory files. Calls mirror the WIT `store`
/// interface; each reads the files fresh, so changes made elsewhere are always seen.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    pub(crate) limits: Limits,
    read_only: bool,
    follow_metis_link: bool,
    trust_foreign_metis: bool,
    global_user: Option<GlobalUser>,
    prompt_budget: bool,
    /// The instance reads run on, shared by clones (see [`KeptInstance`]).
    kept: Arc<KeptInstance>,
    #[cfg(feature = "fault-injection")]
    fault_hook: Option<crate::faults::FaultHook>,
}

/// How many times an add git was at work around is checked (and made again if undone).
const REDO_ROUNDS: u32 = 3;

/// How many times a write is run again after its `.metis/` vanished under it.
const VANISHED_RETRIES: u32 = 3;

/// Whether a call may create `.metis/`: only writes may, reads never do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

impl Workspace {
    /// The workspace at `root`. Nothing is touched until a call is made.
    pub fn open(root: impl Into<PathBuf>) -> Self {
        Workspace {
            root: root.into(),
            limits: Limits::default(),
            read_only: false,
            follow_metis_link: false,
            trust_foreign_metis: false,
            global_user: None,
            prompt_budget: false,
            kept: Arc::default(),
            #[cfg(feature = "fault-injection")]
            fault_hook: None,
        }
    }

    /// The same workspace, with every filesystem call of the component going through
    /// `hook` first (tests only: see [`faults`](crate::faults)).
    #[cfg(feature = "fault-injection")]
    pub fn with_fault_hook(mut self, hook: crate::faults::FaultHook) -> Self {
        self.fault_hook = Some(hook);
        self
    }

    /// The same workspace, with calls run under `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same workspace, with `.metis/` pre-opened read-only: reads work, every write
    /// fails with a `read-only` error and changes nothing (for agents that may consult
    /// memory but not edit it).
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// The same workspace, using `.metis` even when it is a symbolic link, for people who
    /// keep memory elsewhere on purpose. By default such a `.metis` is refused
    /// ([`Error::Workspace`]): a cloned repository could otherwise point it at another
    /// project's memory, or anywhere, and have the store read and write there.
    pub fn follow_metis_link(mut self) -> Self {
        self.follow_metis_link = true;
        self
    }

    /// The same workspace, using a `.metis/` that another user owns, or that sits in a
    /// directory every user can write (without the sticky bit). By default such a
    /// `.metis/` is refused ([`Error::Workspace`]), as git refuses a repository another
    /// user owns: whoever controls it could put entries into this agent's prompt and read
    /// what it adds.
    pub fn trust_foreign_metis(mut self) -> Self {
        self.trust_foreign_metis = true;
        self
    }

    /// The same workspace, with global user memory on: the user's own USER.md (see
    /// [`GlobalUser`]) is composed into the prompt ahead of the workspace's, under its
    /// own heading, and the store and the tools reach it as
    /// [`MemoryFile::GlobalUser`]; a write creates its directory if it is missing.
    pub fn with_global_user(mut self, global: GlobalUser) -> Self {
        self.global_user = Some(global);
        self
    }

    /// Global user memory as this workspace has it (`None`: off).
    pub fn global_user(&self) -> Option<&GlobalUser> {
        self.global_user.as_ref()
    }

    /// The same workspace, with each prompt section's heading showing how full its file
    /// is against its hard cap (`[67% — 2,744/4,096 bytes]`), so the model consolidates
    /// before a write is refused. Off by default, as in the reference's prompt.
    pub fn with_prompt_budget(mut self) -> Self {
        self.prompt_budget = true;
        self
    }

    /// Where `file` is on disk: in the workspace's `.metis/`, or for the user's own, in
    /// its directory (`None` with global user memory off).
    pub fn file_path(&self, file: MemoryFile) -> Option<PathBuf> {
        match (file, &self.global_user) {
            (MemoryFile::GlobalUser, Some(global)) => Some(global.dir().join(file.file_name())),
            (MemoryFile::GlobalUser, None) => None,
            _ => Some(self.metis_dir().join(file.file_name())),
        }
    }

    /// The memory files this workspace has: the workspace's two, and the user's own with
    /// global user memory on, unless it is the workspace's (a workspace at home).
    pub fn memory_files(&self) -> Vec<MemoryFile> {
        let mut files = MemoryFile::ALL.to_vec();
        if self.global_user.is_some() && !self.global_is_workspace() {
            files.push(MemoryFile::GlobalUser);
        }
        files
    }

    /// Whether the user's own `.metis/` is this workspace's (a workspace at home, at the
    /// parent of the user's own directory, or with a `.metis` linked to it): then the two
    /// USER.md are one file, which the component composes as the workspace's. Before
    /// either exists, whether the first write would make them one (the workspace is the
    /// parent of the user's own `.metis`), as the component will find once it has.
    pub fn global_is_workspace(&self) -> bool {
        let Some(global) = &self.global_user else {
            return false;
        };
        let metis = self.existing_metis_dir().ok().flatten();
        match (metis, global.existing().ok().flatten()) {
            (Some(metis), global) => Some(identity(&metis)) == global,
            (None, Some(_)) => false,
            (None, None) => {
                let dir = global.dir();
                let parent = dir.parent().and_then(|parent| fs::metadata(parent).ok());
                let root = fs::metadata(&self.root).ok();
                dir.file_name() == Some(".metis".as_ref())
                    && parent.is_some_and(|parent| {
                        root.is_some_and(|root| identity(&parent) == identity(&root))
                    })
            }
        }
    }

    /// The file a tool call's `USER.md` writes here, by the component's own rule
    /// ([`tool_user_file`](metis_memory_core::global_user::tool_user_file)); `None` when
    /// the agent may write no USER.md here: its `.metis/` is the user's own, which global
    /// user memory's `read` keeps from the agent.
    pub fn tool_user_file(&self) -> Option<MemoryFile> {
        use metis_memory_core::global_user::{GlobalUserMode, UserFile, tool_user_file};
        let mode = self.global_user.as_ref().map(|global| {
            if global.writes() {
                GlobalUserMode::Write
            } else {
                GlobalUserMode::Read
            }
        });
        match tool_user_file(mode, self.global_is_workspace()) {
            UserFile::File(file) => Some(MemoryFile::from_core(file)),
            UserFile::Refused => None,
        }
    }

    /// What every instance of this workspace is told (see `runtime::Settings`).
    pub(crate) fn settings(&self) -> Settings {
        Settings {
            read_only: self.read_only,
            global_user: self.global_user.as_ref().map(GlobalUser::writes),
            prompt_budget: self.prompt_budget,
        }
    }

    /// The user's own `.metis/`, opened, if global user memory is on and it exists.
    fn open_global_dir(&self) -> Result<Option<OpenedDir>, Error> {
        match &self.global_user {
            Some(global) => global.open(),
            None => Ok(None),
        }
    }

    /// Where `.metis` leads when it is a symbolic link (`None` when it is not one, or is
    /// missing): what `status` shows.
    pub fn metis_link_target(&self) -> Option<PathBuf> {
        let dir = self.metis_dir();
        let meta = fs::symlink_metadata(&dir).ok()?;
        if !meta.file_type().is_symlink() {
            return None;
        }
        Some(fs::canonicalize(&dir).unwrap_or_else(|_| fs::read_link(&dir).unwrap_or_default()))
    }

    /// The workspace directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The workspace's `.metis/` directory (which may not exist yet).
    pub fn metis_dir(&self) -> PathBuf {
        self.root.join(".metis")
    }

    /// The file's text; `""` when it is missing.
    pub fn read(&self, file: MemoryFile) -> Result<String, Error> {
        self.call(Access::Read, |store, memory| {
            memory.metis_memory_store().call_read(store, file)
        })
    }

    /// Whether the file exists (a 0-byte file does).
    pub fn exists(&self, file: MemoryFile) -> Result<bool, Error> {
        self.call(Access::Read, |store, memory| {
            memory.metis_memory_store().call_exists(store, file)
        })
    }

    /// The file's size in bytes on disk; 0 when it is missing.
    pub fn size_bytes(&self, file: MemoryFile) -> Result<u64, Error> {
        self.call(Access::Read, |store, memory| {
            memory.metis_memory_store().call_size_bytes(store, file)
        })
    }

    /// Appends `entry` (stripped) as its own line.
    pub fn add_entry(&self, file: MemoryFile, entry: &str) -> Result<WriteResult, Error> {
        self.write(
            file,
            &Edit::AddEntry(entry.to_owned()),
            &WriteOptions::default(),
        )
    }

    /// Replaces the single occurrence of `old_text` with `new_text`.
    pub fn replace(
        &self,
        file: MemoryFile,
        old_text: &str,
        new_text: &str,
    ) -> Result<WriteResult, Error> {
        let replacement = Replacement {
            old_text: old_text.to_owned(),
            new_text: new_text.to_owned(),
        };
        self.write(file, &Edit::Replace(replacement), &WriteOptions::default())
    }

    /// Makes `content` the whole file.
    pub fn consolidate(&self, file: MemoryFile, content: &str) -> Result<WriteResult, Error> {
        self.write(
            file,
            &Edit::Consolidate(content.to_owned()),
            &WriteOptions::default(),
        )
    }

    /// The one write with options (the component's `workspace.write`): `edit` on `file`,
    /// only while the file is still `options.if_unchanged` (otherwise
    /// [`StoreError::Changed`] with the current hash and content, and nothing is
    /// written), refused with [`StoreError::Poisoned`] if `options.scan` finds something in
    /// the text it would leave (a person's write held to the rules a model's tool call
    /// is). `WriteOptions::default()` is the plain write.
    pub fn write(
        &self,
        file: MemoryFile,
        edit: &Edit,
        options: &WriteOptions,
    ) -> Result<WriteResult, Error> {
        let added = match edit {
            Edit::AddEntry(entry) => Some(metis_memory_core::python_strip(entry)),
            _ => None,
        };
        self.next_to_git(
            file,
            added,
            |_| true,
            || self.write_here(file, edit, options),
        )
    }

    fn write_here(
        &self,
        file: MemoryFile,
        edit: &Edit,
        options: &WriteOptions,
    ) -> Result<WriteResult, Error> {
        self.call(Access::Write, |store, memory| {
            let workspace = memory.workspace(store)?;
            let api = memory.metis_memory_store().workspace();
            api.call_write(store, workspace, file, edit, options)
        })
    }

    /// The size above which a write is flagged over the soft cap.
    pub fn soft_cap(&self, file: MemoryFile) -> Result<u64, Error> {
        self.call(Access::Read, |store, memory| {
            memory
                .metis_memory_store()
                .call_soft_cap(store, file)
                .map(Ok)
        })
    }

    /// The largest size a write may leave the file at.
    pub fn hard_cap(&self, file: MemoryFile) -> Result<u64, Error> {
        self.call(Access::Read, |store, memory| {
            memory
                .metis_memory_store()
                .call_hard_cap(store, file)
                .map(Ok)
        })
    }

    /// The system prompt: `base`, then the USER.md and MEMORY.md sections (with global
    /// user memory or the budget on, in their layout). A file that is not text fails.
    pub fn assemble_system_prompt(&self, base: &str) -> Result<String, Error> {
        if self.settings() == Settings::default() {
            return self.call(Access::Read, |store, memory| {
                memory
                    .metis_memory_store()
                    .call_assemble_system_prompt(store, base)
            });
        }
        let options = ComposeOptions {
            audit: AuditPolicy::Off,
            strict: true,
        };
        Ok(self.compose(base, options)?.text)
    }

    /// The one prompt composition (the component's `workspace.compose`): the system
    /// prompt in this workspace's layout, the SHA-256 of each file it was composed from
    /// (what a consolidate based on it expects), the memory audit handled by
    /// `options.audit`, and the session of the model it is shown to (see
    /// [`Session`](crate::Session), which keeps it for you).
    pub fn compose(&self, base: &str, options: ComposeOptions) -> Result<ComposedPrompt, Error> {
        self.call(Access::Read, |store, memory| {
            let workspace = memory.workspace(store)?;
            let api = memory.metis_memory_store().workspace();
            api.call_compose(store, workspace, base, options)
        })
    }

    /// What changed in the memory since `session`'s model was last shown each file (see
    /// [`Session::memory_update`](crate::Session::memory_update)), and the session after.
    pub fn memory_update(
        &self,
        session: &SessionState,
        audit: AuditPolicy,
    ) -> Result<SessionUpdate, Error> {
        self.call(Access::Read, |store, memory| {
            let workspace = memory.workspace(store)?;
            let api = memory.metis_memory_store().workspace();
            api.call_update(store, workspace, session, audit)
        })
    }

    /// A conversation with this workspace's memory that holds the model to what it saw.
    pub fn session(&self) -> crate::Session {
        crate::Session::new(self.clone())
    }

    /// The memory audit of `file` as it is on disk: every rule of the poisoning scan
    /// that matches, one finding per rule and line.
    pub fn audit(&self, file: MemoryFile) -> Result<Vec<AuditFinding>, Error> {
        self.call(Access::Read, |store, memory| {
            memory.metis_memory_store().call_audit(store, file)
        })
    }

    /// The three memory tools, ready for an LLM API.
    pub fn tool_definitions(&self) -> Result<Vec<ToolDefinition>, Error> {
        self.run(Access::Read, |store, memory| {
            Ok(Ok(memory.metis_memory_tools().call_definitions(store)?))
        })
    }

    /// Runs one tool call: `name` with `input`, the call's JSON input, with no session: a
    /// model shown nothing, so a `memory_consolidate` of a file that is not empty is
    /// refused, showing its content (hold the call to what the model saw with a
    /// [`Session`](crate::Session)). A refusal (invalid input, unknown tool, a write the
    /// store rejected) is [`Error::Tool`], and changes nothing on disk.
    pub fn call_tool(&self, name: &str, input: &str) -> Result<ToolSuccess, Error> {
        let options = CallOptions {
            scan: ScanPolicy::ALL,
            session: SessionState::empty(),
            hold_unseen: true,
        };
        self.call_tool_with_options(name, input, &options)?.result()
    }

    /// The one tool call with options (the component's `tools.call-with-options`): held
    /// to what `options.session`'s model has seen, with `options.scan`. A
    /// `memory_consolidate` of a file in `seen` goes through only while the file is that
    /// version; of a file not in it, only while the file is empty under `hold_unseen`,
    /// and whatever the file holds without (a caller that knows what it is doing: a
    /// person's own script, the conformance cases). Returns the outcome and the session
    /// the next call takes (see [`Session`](crate::Session), which keeps it).
    pub fn call_tool_with_options(
        &self,
        name: &str,
        input: &str,
        options: &CallOptions,
    ) -> Result<CallOutcome, Error> {
        let call = self.tool_call_next_to_git(name, input);
        let Some((file, added)) = call.as_ref().map(|(file, added)| (*file, added.as_deref()))
        else {
            return self.call_tool_here(name, input, options);
        };
        let written = |outcome: &CallOutcome| outcome.outcome.is_ok();
        let outcome = self.next_to_git(file, added, written, || {
            self.call_tool_here(name, input, options)
        });
        match outcome {
            // git's refusal, before anything was run: the session is as it was.
            Err(Error::Store { message, .. }) => Ok(CallOutcome {
                outcome: Err(git_refusal(message)),
                session: options.session.clone(),
            }),
            outcome => outcome,
        }
    }

    fn call_tool_here(
        &self,
        name: &str,
        input: &str,
        options: &CallOptions,
    ) -> Result<CallOutcome, Error> {
        // A refusal is a failed write to `run` (so a `.metis/` this call created is
        // removed, and a call whose `.metis/` vanished runs again), but its session is
        // kept: the refusal may have shown the model a version.
        let refused = std::cell::RefCell::new(None);
        let outcome = self.run(Access::Write, |store, memory| {
            let workspace = memory.workspace(store)?;
            let tools = memory.metis_memory_tools();
            let outcome = tools.call_call_with_options(store, workspace, name, input, options)?;
            Ok(match &outcome.outcome {
                Ok(_) => Ok(outcome),
                Err(error) => {
                    let error = Error::Tool(error.clone());
                    *refused.borrow_mut() = Some(outcome);
                    Err(error)
                }
            })
        });
        match (outcome, refused.into_inner()) {
            (Err(Error::Tool(_)), Some(outcome)) => Ok(outcome),
            (outcome, _) => outcome,
        }
    }

    /// The file a tool call writes and, for an add, its entry (stripped); `None` for a
    /// call the component will refuse as invalid.
    fn tool_call_next_to_git(
        &self,
        name: &str,
        input: &str,
    ) -> Option<(MemoryFile, Option<String>)> {
        let call = metis_memory_core::parse_tool_call(name, input).ok()?;
        let file = MemoryFile::from_core(call.file());
        let added = match &call {
            metis_memory_core::ToolCall::Add { entry, .. } => {
                Some(metis_memory_core::python_strip(entry).to_owned())
            }
            _ => None,
        };
        Some((file, added))
    }

    /// Runs `write` (a write to `file`; `added`, the entry it adds, if an add) with a look
    /// at git before and after (see `git_watch` and `metis_memory_core::git`): while git
    /// is rewriting the work tree the write waits, and is refused (nothing run) if git
    /// does not finish in time or has stopped half-way; an add that git was at work
    /// around is held until git finishes, checked, and made again if git undid it; every
    /// add is journaled, so one undone later is listed by `recover`.
    fn next_to_git<T>(
        &self,
        file: MemoryFile,
        added: Option<&str>,
        written: impl Fn(&T) -> bool,
        write: impl Fn() -> Result<T, Error>,
    ) -> Result<T, Error> {
        use metis_memory_core::git::{GitState, SETTLE_NANOS, WAIT_NANOS};
        use std::time::Duration;
        let watched = !self.read_only && file != MemoryFile::GlobalUser;
        let Some(git) = watched
            .then(|| crate::git_watch::GitDir::find(&self.root))
            .flatten()
        else {
            return write();
        };
        let core_file = file.core();
        if let GitState::AtWork(marker) = git.wait_quiet(Duration::from_nanos(WAIT_NANOS)) {
            let message = metis_memory_core::git::refusal_text(core_file, marker);
            return Err(Error::from(StoreError::Busy(crate::FileError {
                file,
                message,
            })));
        }
        // What a write that may remove an entry removes is known from the file before it.
        let before = match added {
            None if git.journals(core_file) => self.read(file).ok(),
            _ => None,
        };
        let index_before = git.index_stamp();
        let outcome = write()?;
        if !written(&outcome) {
            return Ok(outcome);
        }
        let Some(entry) = added else {
            if let (Some(before), Ok(after)) = (before, self.read(file)) {
                git.journal_forget_removed(core_file, &before, &after);
            }
            return Ok(outcome);
        };
        // Held while git was at work around the add: the acknowledgment waits for git to
        // finish, then the entry is looked for, and added again if git undid the add.
        let mut index_seen = index_before;
        for _ in 0..REDO_ROUNDS {
            if git.state() == GitState::Quiet && git.index_stamp() == index_seen {
                break;
            }
            if git.wait_quiet(Duration::from_nanos(SETTLE_NANOS)) != GitState::Quiet {
                break;
            }
            index_seen = git.index_stamp();
            let content = self.read(file)?;
            if !metis_memory_core::git::holds_entry(&content, entry) {
                let edit = Edit::AddEntry(entry.to_owned());
                self.write_here(file, &edit, &WriteOptions::default())?;
            }
        }
        git.journal_add(core_file, entry);
        Ok(outcome)
    }

    /// A `store` call; a refusal carries the component's text for it.
    fn call<T>(
        &self,
        access: Access,
        op: impl Fn(&mut Store<Ctx>, &Instance) -> wasmtime::Result<Result<T, StoreError>>,
    ) -> Result<T, Error> {
        self.run(access, |store, memory| {
            Ok(op(store, memory)?.map_err(Error::from))
        })
    }

    /// Runs `f` on an instance that sees `.metis/`: a read on the kept instance, a write
    /// on a fresh one (after creating `.metis/`), then undoes what a failed write left.
    /// A write whose `.metis/` was removed under it (another writer's refused first write
    /// removes the `.metis/` it created while it is empty) wrote nothing there, and is run
    /// again in the new one.
    fn run<T>(
        &self,
        access: Access,
        f: impl Fn(&mut Store<Ctx>, &Instance) -> wasmtime::Result<Result<T, Error>>,
    ) -> Result<T, Error> {
        let metis_dir = self.metis_dir();
        #[cfg(feature = "fault-injection")]
        let hooked = self.fault_hook.is_some();
        #[cfg(not(feature = "fault-injection"))]
        let hooked = false;
        if access == Access::Read && !hooked {
            let made_for = KeptFor {
                metis: self.existing_metis_dir()?.map(|meta| identity(&meta)),
                global: match &self.global_user {
                    Some(global) => global.existing()?,
                    None => None,
                },
                settings: self.settings(),
            };
            let open = || {
                Ok(Preopens {
                    metis: self.open_metis_dir()?,
                    global: self.open_global_dir()?,
                })
            };
            let outcome = self.kept.with(made_for, open, self.limits, f);
            return outcome.and_then(|result| result);
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let last = attempt > VANISHED_RETRIES;
            let created = self.prepare(access)?;
            // What this call created is removed again if the call fails before it runs.
            let undo = |created_global: bool| {
                if created {
                    let _ = fs::remove_dir(self.metis_dir());
                }
                if let (true, Some(global)) = (created_global, &self.global_user) {
                    let _ = fs::remove_dir(global.dir());
                }
            };
            let created_global = self.prepare_global(access).inspect_err(|_| undo(false))?;
            let opened = self
                .open_metis_dir()
                .inspect_err(|_| undo(created_global))?;
            let global = self
                .open_global_dir()
                .inspect_err(|_| undo(created_global))?;
            if opened.is_none() && access == Access::Write && !self.read_only {
                if !last {
                    continue;
                }
                return Err(Error::Workspace(format!(
                    "{} was removed as the call began",
                    metis_dir.display()
                )));
            }
            let owner = owner_token();
            let call = Call {
                metis_dir: opened.as_ref(),
                global_dir: global.as_ref(),
                settings: self.settings(),
                limits: self.limits,
                owner,
                #[cfg(feature = "fault-injection")]
                fault_hook: self.fault_hook.clone(),
            };
            let mut outcome = with_instance(call, &f).and_then(|result| result);
            if access == Access::Write {
                let dirs = (opened.as_ref(), global.as_ref());
                self.after_write(&mut outcome, owner, dirs, (created, created_global));
                // A call that created `.metis/` removed it itself when it failed.
                let failed = matches!(&outcome, Err(e) if !matches!(e, Error::Trap { .. }));
                if failed && !created && !last && opened.is_some_and(|dir| self.vanished(dir.id)) {
                    continue;
                }
            }
            return outcome;
        }
    }

    /// Whether `.metis/` is no longer the directory `id` names (removed, or replaced).
    fn vanished(&self, id: (u64, u64)) -> bool {
        match self.existing_metis_dir() {
            Ok(None) => true,
            Ok(Some(meta)) => identity(&meta) != id,
            Err(_) => false,
        }
    }

    /// Undoes what a failed write left: what an instance that trapped left in `.metis/`
    /// (the component's `recover-after-trap`, on a fresh instance with the trapped call's
    /// owner token), then a `.metis/` this call created. `remove_dir` only removes an
    /// empty directory, so anything another writer put there meanwhile stays; a writer
    /// that found it empty and had not written yet runs again (see `run`).
    fn after_write<T>(
        &self,
        outcome: &mut Result<T, Error>,
        owner: u64,
        (opened, global): (Option<&OpenedDir>, Option<&OpenedDir>),
        (created, created_global): (bool, bool),
    ) {
        let any_dir = opened.is_some() || global.is_some();
        if let (Err(Error::Trap { written, .. }), true) = (&mut *outcome, any_dir) {
            let call = Call {
                metis_dir: opened,
                global_dir: global,
                settings: Settings {
                    read_only: false,
                    ..self.settings()
                },
                // The host's own clean-up, not the caller's call: the caller's limits
                // may be what the trapped call ran out of.
                limits: Limits::default(),
                owner,
                #[cfg(feature = "fault-injection")]
                fault_hook: None,
            };
            // If even this traps, the lock is left to expire (a lease, as after a
            // crash) and what landed is not known.
            let recovered = with_instance(call, |store, memory| {
                memory
                    .metis_memory_store()
                    .call_recover_after_trap(store, owner)
            });
            *written = recovered.ok().and_then(landed);
        }
        if created && outcome.is_err() {
            let _ = fs::remove_dir(self.metis_dir());
        }
        if let (true, Err(_), Some(global)) = (created_global, &*outcome, &self.global_user) {
            let _ = fs::remove_dir(global.dir());
        }
    }

    /// Whether this call created the user's own `.metis/`: a write to a writable
    /// workspace with global user memory on does, when it is missing.
    fn prepare_global(&self, access: Access) -> Result<bool, Error> {
        match &self.global_user {
            Some(global) if access == Access::Write && !self.read_only => global.create(),
            _ => Ok(false),
        }
    }

    /// Whether this call created `.metis/`: only a write to a writable workspace does.
    fn prepare(&self, access: Access) -> Result<bool, Error> {
        if access == Access::Write && !self.read_only {
            self.create_metis_dir()
        } else {
            Ok(false)
        }
    }

    /// `.metis/` opened for pre-opening (`None` if there is none), never through a link
    /// unless this workspace follows one: the instance gets exactly the directory opened
    /// here, even if `.metis` is swapped for a link a moment later.
    pub(crate) fn open_metis_dir(&self) -> Result<Option<OpenedDir>, Error> {
        let dir = self.metis_dir();
        match crate::opened::open(&dir, true, self.follow_metis_link) {
            Ok(file) => OpenedDir::checked(&dir, file, |meta| {
                if !self.trust_foreign_metis {
                    crate::trust::check_owner(&dir, meta)?;
                    crate::trust::check_root(&self.root)?;
                }
                Ok(())
            })
            .map(Some),
            // Say why as `existing_metis_dir` does (a link refused, not a directory,
            // missing); a directory again by now means it was swapped meanwhile.
            Err(e) => match self.existing_metis_dir()? {
                None => Ok(None),
                Some(_) if refused_as_a_link(&e) => Err(Error::Workspace(format!(
                    "{} changed as it was opened (it was a symbolic link or not a directory a moment ago: {e}), so it is refused",
                    dir.display()
                ))),
                Some(_) => Err(Error::Workspace(format!(
                    "cannot open {}: {e}",
                    dir.display()
                ))),
            },
        }
    }

    /// `.metis/`'s metadata if it exists; an error if something other than a directory
    /// is there, or a symbolic link that this workspace was not told to follow.
    fn existing_metis_dir(&self) -> Result<Option<fs::Metadata>, Error> {
        let dir = self.metis_dir();
        let own = fs::symlink_metadata(&dir);
        // The common case in one system call: a directory that is not a link.
        if let Ok(meta) = &own
            && meta.is_dir()
        {
            return Ok(Some(meta.clone()));
        }
        let is_link = own.is_ok_and(|meta| meta.file_type().is_symlink());
        if is_link && !self.follow_metis_link {
            let target = fs::read_link(&dir).unwrap_or_default();
            return Err(Error::Workspace(format!(
                "{} is a symbolic link to {}: memory would be read and written outside this workspace, so it is refused (if you keep memory there on purpose, pass --allow-metis-link, or use Workspace::follow_metis_link)",
                dir.display(),
                target.display()
            )));
        }
        match fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => Ok(Some(meta)),
            Ok(_) => Err(Error::Workspace(format!(
                "{} exists but is not a directory",
                dir.display()
            ))),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::Workspace(format!(
                "cannot access {}: {e}",
                dir.display()
            ))),
        }
    }

    /// Makes sure `.metis/` exists (mode 0700 when created here). Returns whether this
    /// call created it.
    fn create_metis_dir(&self) -> Result<bool, Error> {
        if self.existing_metis_dir()?.is_some() {
            return Ok(false);
        }
        if !self.trust_foreign_metis {
            crate::trust::check_root(&self.root)?;
        }
        let dir = self.metis_dir();
        let mut builder = DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&dir) {
            // The new entry in the workspace directory is made durable before anything is
            // written into it, as the rename of a file into `.metis/` is by its own sync.
            Ok(()) => match fs::File::open(&self.root).and_then(|root| root.sync_all()) {
                Ok(()) => Ok(true),
                Err(e) => {
                    let _ = fs::remove_dir(&dir);
                    Err(Error::Workspace(format!(
                        "cannot sync {} after creating .metis/ in it: {e}",
                        self.root.display()
                    )))
                }
            },
            // Another writer created it first.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(Error::Workspace(format!(
                "cannot create {}: {e}",
                dir.display()
            ))),
        }
    }
}

/// Whether opening a directory failed because the path was a link (not followed) or
/// not a directory: what a `.metis` swapped between the check and the open gives.
fn refused_as_a_link(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR))
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Whether a trapped call's write landed, as `recover-after-trap` judged it.
fn landed(landing: Landing) -> Option<bool> {
    match landing {
        Landing::Written => Some(true),
        Landing::NotWritten => Some(false),
        Landing::Untraced => None,
    }
}

/// A refusal for the model of a write git was at work around (nothing was written).
fn git_refusal(message: String) -> crate::ToolError {
    crate::ToolError {
        message,
        is_user_visible: true,
        shown: None,
    }
}
