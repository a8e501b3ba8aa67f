//! What the model has seen of each memory file, so a `memory_consolidate` composed from
//! an old version cannot drop what another session or a person wrote since.

use crate::{
    CallOptions, ComposedPrompt, Error, FileVersion, MemoryFile, Operation, ScanPolicy, ToolSuccess,
};

/// The versions of the memory files a model has seen, kept by the host for one
/// conversation and handed to
/// [`Workspace::call_tool_with_options`](crate::Workspace::call_tool_with_options).
///
/// Make one from each composed prompt; [`observe`](Self::observe) every tool call's
/// outcome; call [`next_response`](Self::next_response) before asking the model again
/// if the prompt is not composed afresh.
///
/// ```no_run
/// use metis_memory::{AuditPolicy, ScanPolicy, Seen, Workspace};
///
/// let ws = Workspace::open("path/to/workspace");
/// let prompt = ws.compose_system_prompt("You are a careful assistant.", AuditPolicy::Omit)?;
/// let mut seen = Seen::from_prompt(&prompt);
/// // … the model answers with tool calls …
/// for (name, input) in [("memory_consolidate", r#"{"file": "MEMORY.md", "content": "- builds with cargo\n"}"#)] {
///     let outcome = ws.call_tool_with_options(name, input, &seen.options(ScanPolicy::default()));
///     seen.observe(&outcome);
/// }
/// # Ok::<(), metis_memory::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    versions: Vec<FileVersion>,
    /// Files the prompt left out because the audit found something in them.
    withheld: Vec<MemoryFile>,
    /// Versions refusals showed the model, taken in once it has read them.
    shown: Vec<FileVersion>,
}

impl Seen {
    /// The versions a prompt was composed from: what the model sees in it. A file the
    /// audit left out is withheld: the model has not seen it, so no tool may write it.
    pub fn from_prompt(prompt: &ComposedPrompt) -> Seen {
        let (left_out, seen): (Vec<_>, Vec<_>) = prompt
            .sources
            .iter()
            .partition(|source| !source.included && !source.findings.is_empty());
        Seen {
            versions: seen
                .into_iter()
                .map(|source| FileVersion {
                    file: source.file,
                    sha256: source.sha256.clone(),
                })
                .collect(),
            withheld: left_out.into_iter().map(|source| source.file).collect(),
            shown: Vec::new(),
        }
    }

    /// The versions held, one per file.
    pub fn versions(&self) -> &[FileVersion] {
        &self.versions
    }

    /// The files kept from the model.
    pub fn withheld(&self) -> &[MemoryFile] {
        &self.withheld
    }

    /// Call options with `scan`, these versions and the withheld files.
    pub fn options(&self, scan: ScanPolicy) -> CallOptions {
        CallOptions {
            scan,
            seen: self.versions.clone(),
            withheld: self.withheld.clone(),
        }
    }

    /// Takes in a tool call's outcome. A write the model made on the version it had
    /// seen moves it to the new version (it knows its own edit), and so does a
    /// consolidate of a file not held yet (it wrote all of it); a write on another
    /// version leaves it where it was, since the model has not seen what changed in
    /// between. A refusal that showed the model a file's current content is kept for
    /// [`next_response`](Self::next_response): other tool calls of the same response
    /// were written before the model read it.
    pub fn observe(&mut self, outcome: &Result<ToolSuccess, Error>) {
        match outcome {
            Ok(success) => {
                let result = &success.result;
                match self.held(result.file) {
                    Some(held) if held.sha256.eq_ignore_ascii_case(&result.before_hash) => {
                        held.sha256 = result.after_hash.clone();
                    }
                    Some(_) => {}
                    None if success.operation == Operation::Consolidate => {
                        self.versions.push(FileVersion {
                            file: result.file,
                            sha256: result.after_hash.clone(),
                        });
                    }
                    None => {}
                }
            }
            Err(Error::Tool(refusal)) => self.shown.extend(refusal.shown.clone()),
            Err(_) => {}
        }
    }

    /// The model is asked again without a freshly composed prompt: what refusals showed
    /// it is now seen.
    pub fn next_response(&mut self) {
        for shown in std::mem::take(&mut self.shown) {
            match self.held(shown.file) {
                Some(held) => held.sha256 = shown.sha256,
                None => self.versions.push(shown),
            }
        }
    }

    fn held(&mut self, file: MemoryFile) -> Option<&mut FileVersion> {
        self.versions
            .iter_mut()
            .find(|version| version.file == file)
    }
}
