//! What the model has seen of each memory file, so a `memory_consolidate` composed from
//! an old version cannot drop what another session or a person wrote since.

use crate::{CallOptions, ComposedPrompt, Error, FileVersion, ScanPolicy, ToolSuccess};

/// The versions of the memory files a model has seen in one conversation, kept by the
/// host and handed to [`Workspace::call_tool_with_options`](crate::Workspace::call_tool_with_options).
///
/// ```no_run
/// use metis_memory::{AuditPolicy, ScanPolicy, Seen, Workspace};
///
/// let ws = Workspace::open("path/to/workspace");
/// let prompt = ws.compose_system_prompt("You are a careful assistant.", AuditPolicy::Off)?;
/// let mut seen = Seen::from_prompt(&prompt);
/// // … the model answers with a tool call …
/// let input = r#"{"file": "MEMORY.md", "content": "- builds with cargo\n"}"#;
/// let outcome = ws.call_tool_with_options(
///     "memory_consolidate",
///     input,
///     &seen.options(ScanPolicy::default()),
/// );
/// seen.observe(&outcome);
/// # Ok::<(), metis_memory::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    versions: Vec<FileVersion>,
}

impl Seen {
    /// The versions a prompt was composed from: what the model sees in it. A file the
    /// audit left out is not listed: the model has not seen it, and showing it the
    /// content in a refusal would bring in what the audit kept out.
    pub fn from_prompt(prompt: &ComposedPrompt) -> Seen {
        Seen {
            versions: prompt
                .sources
                .iter()
                .filter(|source| source.included || source.findings.is_empty())
                .map(|source| FileVersion {
                    file: source.file,
                    sha256: source.sha256.clone(),
                })
                .collect(),
        }
    }

    /// The versions held, one per file.
    pub fn versions(&self) -> &[FileVersion] {
        &self.versions
    }

    /// Call options with `scan` and these versions.
    pub fn options(&self, scan: ScanPolicy) -> CallOptions {
        CallOptions {
            scan,
            seen: self.versions.clone(),
        }
    }

    /// Takes in a tool call's outcome: a write the model made on the version it had
    /// seen moves it to the new version (it knows its own edit); a write on another
    /// version leaves it where it was, since the model has not seen what changed in
    /// between; a refusal that showed the model a file's current content moves it there.
    pub fn observe(&mut self, outcome: &Result<ToolSuccess, Error>) {
        match outcome {
            Ok(success) => {
                let result = &success.result;
                if let Some(held) = self.held(result.file)
                    && held.sha256.eq_ignore_ascii_case(&result.before_hash)
                {
                    held.sha256 = result.after_hash.clone();
                }
            }
            Err(Error::Tool(refusal)) => {
                if let Some(shown) = &refusal.shown {
                    match self.held(shown.file) {
                        Some(held) => held.sha256 = shown.sha256.clone(),
                        None => self.versions.push(shown.clone()),
                    }
                }
            }
            Err(_) => {}
        }
    }

    fn held(&mut self, file: crate::MemoryFile) -> Option<&mut FileVersion> {
        self.versions
            .iter_mut()
            .find(|version| version.file == file)
    }
}
