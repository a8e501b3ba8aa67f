//! One conversation's hold on memory: the prompt its model was shown and every tool call
//! it makes, so that a `memory_consolidate` composed from an old version is refused
//! instead of dropping what another session or a person wrote since. How a session moves
//! is decided once, in `metis-memory-core` (the component runs the same code for the
//! other languages' packages); this type only keeps it between calls.

use metis_memory_core as core;

use crate::{
    AuditFinding, AuditPolicy, ComposedPrompt, Error, FileVersion, MemoryFile, ScanPolicy,
    SessionState, ToolSuccess, Workspace,
};

/// A memory file as [`Session::show_file`] read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShownFile {
    /// The file's text (`""` when it is missing).
    pub text: String,
    /// What the memory audit found in it, by line (nothing when the audit is off).
    pub findings: Vec<AuditFinding>,
    /// Whether the audit kept it from the model: the text must not be shown.
    pub withheld: bool,
}

/// A model's conversation with a workspace's memory: compose the prompt with
/// [`system_prompt`](Self::system_prompt) before every model call, run the model's tool
/// calls with [`call_tool`](Self::call_tool), and a consolidate the model based on an old
/// version is refused with the current content shown to it.
///
/// The prompt is audited under [`AuditPolicy::Omit`] unless told otherwise: a file the
/// memory audit flags is left out of the prompt, and the tools refuse to write it.
///
/// ```no_run
/// use metis_memory::{Session, Workspace};
///
/// let mut session = Session::new(Workspace::open("path/to/workspace"));
/// let prompt = session.system_prompt("You are a careful assistant.")?;
/// // … send `prompt.text` with the tool definitions; for each tool call the model makes:
/// let outcome = session.call_tool("memory_add", r#"{"file": "MEMORY.md", "entry": "- builds with cargo"}"#);
/// # Ok::<(), metis_memory::Error>(())
/// ```
///
/// A snapshot session ([`snapshot`](Self::snapshot)) composes the system prompt once
/// and returns the same bytes for the rest of the conversation, so a provider's prompt
/// cache keeps the whole prefix; the model learns of its own writes from their tool
/// results, and of anyone else's from [`memory_update`](Self::memory_update), text the
/// host appends to the conversation.
#[derive(Clone, Debug)]
pub struct Session {
    workspace: Workspace,
    audit: AuditPolicy,
    scan: ScanPolicy,
    state: SessionState,
    snapshot: bool,
    /// In a snapshot session, the prompt composed for a base: returned for that base.
    frozen: Option<(String, ComposedPrompt)>,
}

impl Session {
    /// A new conversation with `workspace`'s memory, shown nothing yet: a consolidate of a
    /// file that is not empty is refused, showing it, until the model has been shown the
    /// file (by [`system_prompt`](Self::system_prompt), say).
    pub fn new(workspace: Workspace) -> Session {
        Session {
            workspace,
            audit: AuditPolicy::Omit,
            scan: ScanPolicy::default(),
            state: SessionState::empty(),
            snapshot: false,
            frozen: None,
        }
    }

    /// The same session, in snapshot mode: [`system_prompt`](Self::system_prompt)
    /// composes the memory once and returns the same bytes for every later call with the
    /// same base, whatever is written meanwhile (a departure from the reference, which
    /// composes the memory afresh before every model call: see docs/spec.md §8). Call
    /// [`memory_update`](Self::memory_update) before each user turn and append what it
    /// returns to the conversation.
    pub fn snapshot(mut self) -> Session {
        self.snapshot = true;
        self
    }

    /// Whether this is a snapshot session.
    pub fn is_snapshot(&self) -> bool {
        self.snapshot
    }

    /// A snapshot session kept elsewhere in between, taken up again with the prompt it
    /// froze for `base` (the CLI keeps both in its session file).
    pub fn resume_snapshot(
        workspace: Workspace,
        state: SessionState,
        base: String,
        prompt: ComposedPrompt,
    ) -> Session {
        Session {
            state,
            snapshot: true,
            frozen: Some((base, prompt)),
            ..Session::new(workspace)
        }
    }

    /// In a snapshot session, the base and the prompt frozen for it, once composed.
    pub fn frozen(&self) -> Option<(&str, &ComposedPrompt)> {
        self.frozen
            .as_ref()
            .map(|(base, prompt)| (base.as_str(), prompt))
    }

    /// A session kept elsewhere in between (a file, a database), taken up again: `state`
    /// must be one a session returned, never one made up.
    pub fn resume(workspace: Workspace, state: SessionState) -> Session {
        Session {
            state,
            ..Session::new(workspace)
        }
    }

    /// The options the session's next tool call runs under: held to what the model saw,
    /// a file it was shown nothing of to the empty file. For a call made another way too
    /// (a dry run on a copy), which then judges the call as the session would.
    pub fn options(&self) -> crate::CallOptions {
        crate::CallOptions {
            scan: self.scan,
            session: self.state.clone(),
            hold_unseen: true,
        }
    }

    /// The same session, with prompts composed under `audit`.
    pub fn with_audit(mut self, audit: AuditPolicy) -> Session {
        self.audit = audit;
        self
    }

    /// The same session, with tool calls scanned under `scan`.
    pub fn with_scan(mut self, scan: ScanPolicy) -> Session {
        self.scan = scan;
        self
    }

    /// The workspace this session reads and writes.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// What the model has seen: the state the next tool call is held to.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The system prompt for the next model call (`base`, then the memory sections), with
    /// the versions it shows: the session starts again from what the model now sees (a
    /// file that is not text is left out, with a note saying so, and no version of it is
    /// seen, so no consolidate replaces it). In
    /// a snapshot session, the prompt first composed for `base`, byte for byte, and the
    /// model is asked again ([`next_response`](Self::next_response)); another base
    /// composes and freezes afresh. Every prompt a session hands out carries, as its
    /// `session`, this session as it stands after it ([`state`](Self::state)).
    pub fn system_prompt(&mut self, base: &str) -> Result<ComposedPrompt, Error> {
        if let Some((frozen_base, prompt)) = &self.frozen
            && frozen_base == base
        {
            let mut prompt = prompt.clone();
            self.next_response();
            prompt.session = self.state.clone();
            return Ok(prompt);
        }
        let composed = self.workspace.compose(base, self.compose_options())?;
        self.state = composed.session.clone();
        if self.snapshot {
            self.frozen = Some((base.to_owned(), composed.clone()));
        }
        Ok(composed)
    }

    /// What changed in the memory since the model was last shown each file, as text to
    /// append to the conversation (at the start of the next user turn, say; never in the
    /// system prompt), or `None` when nothing did. Each changed file is shown whole,
    /// between marker lines naming its version, and counts as seen once returned: the
    /// model's next consolidate is held to it. The model's own writes, which it learnt
    /// from their tool results, are not news. For a snapshot session (any session may
    /// call it).
    pub fn memory_update(&mut self) -> Result<Option<String>, Error> {
        let update = self.workspace.memory_update(&self.state, self.audit)?;
        self.state = update.session;
        Ok(update.text)
    }

    /// Runs one of the model's tool calls, held to what it has seen.
    pub fn call_tool(&mut self, name: &str, input: &str) -> Result<ToolSuccess, Error> {
        let outcome = self
            .workspace
            .call_tool_with_options(name, input, &self.options())?;
        self.state = outcome.session;
        outcome.outcome.map_err(Error::Tool)
    }

    /// The model is asked again without a freshly composed prompt: what refusals showed it
    /// now counts as seen.
    pub fn next_response(&mut self) {
        self.update(|session| session.next_response());
    }

    /// The prompt composed under this session's audit, shown to the model on top of what
    /// it saw before (an MCP prompt or resource, a second look mid-conversation): unlike
    /// [`system_prompt`](Self::system_prompt), what the model saw of files not in it
    /// still counts. A file that is not text is left out with a note and counts as
    /// neither seen nor withheld. When nothing can be composed (the `refuse` policy found
    /// something, a file is too large), the model is shown nothing, so each file it
    /// could have been shown is withheld (see [`show_each`](Self::show_each) for showing
    /// what can be shown instead).
    pub fn show_prompt(&mut self, base: &str) -> Result<ComposedPrompt, Error> {
        match self.workspace.compose(base, self.compose_options()) {
            Ok(mut prompt) => {
                self.saw_prompt(&prompt);
                prompt.session = self.state.clone();
                Ok(prompt)
            }
            Err(error) => {
                self.withhold_unshown();
                Err(error)
            }
        }
    }

    /// The prompt composed under this session's audit, delivered where the model may
    /// never see it (an MCP client's `initialize` instructions, a resource or a prompt a
    /// client reads): nothing in it counts as seen, but a file the audit left out is
    /// withheld from the tools all the same.
    pub fn offer_prompt(&mut self, base: &str) -> Result<ComposedPrompt, Error> {
        let mut prompt = self.workspace.compose(base, self.compose_options())?;
        let sources = core_sources(&prompt);
        self.update(|session| session.offered_prompt(&sources));
        prompt.session = self.state.clone();
        Ok(prompt)
    }

    /// One file as [`show_file`](Self::show_file) reads it, delivered where the model may
    /// never see it: it does not count as seen, but a file the audit keeps out is withheld.
    pub fn offer_file(&mut self, file: MemoryFile) -> Result<ShownFile, Error> {
        self.look(file, false)
    }

    /// Each file as [`offer_file`](Self::offer_file) reads it: for a prompt that could not
    /// be composed whole, delivered where the model may never see it.
    pub fn offer_each(&mut self) -> Vec<(MemoryFile, Result<ShownFile, Error>)> {
        self.look_each(false)
    }

    /// Each file on its own, as [`show_file`](Self::show_file) shows it, for a prompt
    /// that could not be composed whole: a file the audit flags is withheld; one that
    /// cannot be read as text (not UTF-8, too large) is neither seen nor withheld: no
    /// model can be shown it, so the session refuses every consolidate of it and a person
    /// replaces it. The caller must show the model exactly the texts returned.
    pub fn show_each(&mut self) -> Vec<(MemoryFile, Result<ShownFile, Error>)> {
        self.look_each(true)
    }

    fn look_each(&mut self, shown: bool) -> Vec<(MemoryFile, Result<ShownFile, Error>)> {
        self.workspace
            .memory_files()
            .into_iter()
            .map(|file| (file, self.look(file, shown)))
            .collect()
    }

    /// After a composition that failed: every file the model could have been shown (one
    /// the store can read as text) is withheld, since it was shown none of them.
    fn withhold_unshown(&mut self) {
        for file in self.workspace.memory_files() {
            if self.workspace.read(file).is_ok() {
                self.withhold(file);
            }
        }
    }

    /// One file as the model may see it under this session's audit: its text and what
    /// the audit found (nothing under `off`). The file counts as seen at the version read,
    /// unless the audit found something and the policy is `omit` or `refuse`: then it is
    /// withheld, and [`ShownFile::withheld`] says the text must not reach the model.
    pub fn show_file(&mut self, file: MemoryFile) -> Result<ShownFile, Error> {
        self.look(file, true)
    }

    /// `file` read and audited; withheld if the audit keeps it out, else seen if `shown`.
    fn look(&mut self, file: MemoryFile, shown: bool) -> Result<ShownFile, Error> {
        let text = self.workspace.read(file)?;
        let mut session = to_core(&self.state);
        let showing = match shown {
            true => core::session::Showing::BeforeTheResponse,
            false => core::session::Showing::Offered,
        };
        let (found, withheld) = session.look(file.core(), &text, self.audit.core(), showing);
        self.state = from_core(session);
        let findings: Vec<AuditFinding> = found
            .into_iter()
            .map(|finding| AuditFinding {
                line: finding.line,
                rule: finding.rule,
                detail: finding.detail,
            })
            .collect();
        Ok(ShownFile {
            text,
            findings,
            withheld,
        })
    }

    /// The model was shown `file` whole at version `sha256` by other means (an MCP
    /// resource read, say).
    pub fn saw(&mut self, file: MemoryFile, sha256: &str) {
        self.update(|session| session.saw(file.core(), sha256));
    }

    /// The model was shown `prompt` as well as what it saw before (an MCP prompt).
    pub fn saw_prompt(&mut self, prompt: &ComposedPrompt) {
        let sources = core_sources(prompt);
        self.update(|session| session.saw_prompt(&sources));
    }

    /// `file` was kept from the model: the tools refuse to write it.
    pub fn withhold(&mut self, file: MemoryFile) {
        self.update(|session| session.withhold(file.core()));
    }

    fn compose_options(&self) -> crate::ComposeOptions {
        crate::ComposeOptions {
            audit: self.audit,
            strict: false,
        }
    }

    fn update(&mut self, f: impl FnOnce(&mut core::session::Session)) {
        let mut session = to_core(&self.state);
        f(&mut session);
        self.state = from_core(session);
    }
}

fn core_sources(prompt: &ComposedPrompt) -> Vec<core::PromptSource> {
    prompt
        .sources
        .iter()
        .map(|source| core::PromptSource {
            file: source.file.core(),
            sha256: source.sha256.clone(),
            size_bytes: source.size_bytes,
            included: source.included,
            findings: source
                .findings
                .iter()
                .map(|finding| core::audit::AuditFinding {
                    line: finding.line,
                    rule: finding.rule.clone(),
                    detail: finding.detail.clone(),
                })
                .collect(),
        })
        .collect()
}

fn to_core(state: &SessionState) -> core::session::Session {
    let versions = |list: &[FileVersion]| {
        list.iter()
            .map(|version| (version.file.core(), version.sha256.clone()))
            .collect()
    };
    core::session::Session {
        seen: versions(&state.seen),
        withheld: state.withheld.iter().map(|file| file.core()).collect(),
        shown: versions(&state.shown),
        own: state
            .own_writes
            .iter()
            .map(|write| core::tool_call::OwnWrite {
                file: write.file.core(),
                before_hash: write.before_sha256.clone(),
                after_hash: write.after_sha256.clone(),
            })
            .collect(),
    }
}

fn from_core(session: core::session::Session) -> SessionState {
    let versions = |list: Vec<(core::MemoryFile, String)>| {
        list.into_iter()
            .map(|(file, sha256)| FileVersion {
                file: MemoryFile::from_core(file),
                sha256,
            })
            .collect()
    };
    SessionState {
        seen: versions(session.seen),
        withheld: session
            .withheld
            .into_iter()
            .map(MemoryFile::from_core)
            .collect(),
        shown: versions(session.shown),
        own_writes: session
            .own
            .into_iter()
            .map(|write| crate::OwnWrite {
                file: MemoryFile::from_core(write.file),
                before_sha256: write.before_hash,
                after_sha256: write.after_hash,
            })
            .collect(),
    }
}
