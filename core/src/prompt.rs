use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::audit::{AuditFinding, AuditPolicy};
use crate::text::{decode_utf8, python_rstrip, python_strip};
use crate::{MemoryFile, StoreError, sha256_hex};

/// One memory file as prompt composition read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptSource {
    pub file: MemoryFile,
    /// SHA-256 of the exact bytes read: what a consolidate based on this prompt expects.
    pub sha256: String,
    pub size_bytes: u64,
    /// Whether the file's section is in the prompt.
    pub included: bool,
    pub findings: Vec<AuditFinding>,
}

/// A composed system prompt and the versions of the files it was composed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComposedPrompt {
    pub text: String,
    /// In the prompt's order (see [`PromptLayout::files`]).
    pub sources: Vec<PromptSource>,
}

/// What a host turned on that changes the prompt's layout; both off by default, which
/// is the reference's prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PromptLayout {
    /// Global user memory: the user's own `~/.metis/USER.md` is composed ahead of the
    /// workspace's USER.md.
    pub global_user: bool,
    /// Each section's heading says how full its file is, against its hard cap, so the
    /// model consolidates before a write is refused.
    pub budget: bool,
}

impl PromptLayout {
    /// The files composed, in the prompt's order: the user's own USER.md (when on), the
    /// workspace's USER.md, MEMORY.md.
    pub fn files(self) -> &'static [MemoryFile] {
        if self.global_user {
            &[MemoryFile::GlobalUser, MemoryFile::User, MemoryFile::Memory]
        } else {
            &[MemoryFile::User, MemoryFile::Memory]
        }
    }
}

/// [`assemble_system_prompt`] from the files `read` yields (each read once, in the
/// prompt's order, USER.md before MEMORY.md as the reference reads them), with the hash of
/// what was read and the audit's findings handled by `policy`.
///
/// A file that is not valid UTF-8 is left out, with a note in its place saying why and
/// how a person fixes it ([`not_text_note`]), and is not among the sources: no model is
/// shown any version of it, so no session counts one as seen. One bad byte in one file
/// must not cost the model the rest of its memory, nor stop an agent from starting.
pub fn compose_system_prompt(
    base: &str,
    read: impl FnMut(MemoryFile) -> Result<Vec<u8>, StoreError>,
    policy: AuditPolicy,
    layout: PromptLayout,
) -> Result<ComposedPrompt, StoreError> {
    compose(base, read, policy, layout, NotText::LeaveOut)
}

/// [`compose_system_prompt`], strict: a file that is not valid UTF-8 fails it
/// (`InvalidUtf8`), as the store's `assemble-system-prompt` promises, rather than leave
/// memory out.
pub fn compose_strict(
    base: &str,
    read: impl FnMut(MemoryFile) -> Result<Vec<u8>, StoreError>,
    policy: AuditPolicy,
    layout: PromptLayout,
) -> Result<ComposedPrompt, StoreError> {
    compose(base, read, policy, layout, NotText::Fail)
}

/// What composition does with a file that is not valid UTF-8.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NotText {
    Fail,
    LeaveOut,
}

fn compose(
    base: &str,
    mut read: impl FnMut(MemoryFile) -> Result<Vec<u8>, StoreError>,
    policy: AuditPolicy,
    layout: PromptLayout,
    not_text: NotText,
) -> Result<ComposedPrompt, StoreError> {
    let files = layout.files();
    let mut sections: Vec<Section> = Vec::with_capacity(files.len());
    let mut sources = Vec::with_capacity(files.len());
    for &file in files {
        let bytes = read(file)?;
        let text = match decode_utf8(file, &bytes) {
            Ok(text) => text,
            Err(StoreError::InvalidUtf8 { offset, .. }) if not_text == NotText::LeaveOut => {
                sections.push(Section {
                    file,
                    text: not_text_note(file, offset),
                    kind: SectionKind::Note,
                });
                continue;
            }
            Err(error) => return Err(error),
        };
        let findings = policy.findings(text);
        let left_out = policy.keeps_out(&findings);
        if left_out && policy == AuditPolicy::Refuse {
            return Err(StoreError::Flagged { file, findings });
        }
        sources.push(PromptSource {
            file,
            sha256: sha256_hex(&bytes),
            size_bytes: bytes.len() as u64,
            included: !left_out && !python_strip(text).is_empty(),
            findings,
        });
        if !left_out {
            sections.push(Section {
                file,
                text: text.to_owned(),
                kind: match layout.budget {
                    true => SectionKind::Budgeted(bytes.len() as u64),
                    false => SectionKind::Plain,
                },
            });
        }
    }
    Ok(ComposedPrompt {
        text: assemble_sections(base, &sections),
        sources,
    })
}

/// What a composed prompt says in place of `file`, which is not valid UTF-8 from byte
/// `offset`: for the model, that it was left out and why; for the person the model tells,
/// how to see where and replace it (the store never rewrites such a file lossily, and
/// only a consolidate replaces it).
pub fn not_text_note(file: MemoryFile, offset: u64) -> String {
    format!(
        "[metis-memory: {file} cannot be shown: it is not valid UTF-8 (first invalid byte at offset {offset}), so it is left out, and the memory tools will not replace what you cannot be shown: ask the user to fix it (`metis-memory audit {file}` says where, `metis-memory consolidate {file} -` replaces it).]"
    )
}

/// One file's part of the prompt.
struct Section {
    file: MemoryFile,
    text: String,
    kind: SectionKind,
}

enum SectionKind {
    /// The file's text under its heading.
    Plain,
    /// The file's text under a heading that shows its size against its hard cap.
    Budgeted(u64),
    /// A note in place of the file's text, without a heading: nothing of the file is in it.
    Note,
}

/// The system prompt: `base` (trailing whitespace removed), then the USER.md section, then
/// the MEMORY.md section, each left out when empty after stripping, joined by a blank line.
pub fn assemble_system_prompt(base: &str, user_md: &str, memory_md: &str) -> String {
    let section = |file, text: &str| Section {
        file,
        text: text.to_owned(),
        kind: SectionKind::Plain,
    };
    assemble_sections(
        base,
        &[
            section(MemoryFile::User, user_md),
            section(MemoryFile::Memory, memory_md),
        ],
    )
}

fn assemble_sections(base: &str, sections: &[Section]) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(sections.len() + 1);
    let base = python_rstrip(base);
    if !base.is_empty() {
        parts.push(base.to_owned());
    }
    for section in sections {
        let text = python_strip(&section.text);
        if text.is_empty() {
            continue;
        }
        let heading = heading(section.file);
        parts.push(match section.kind {
            SectionKind::Plain => format!("{heading}\n{text}"),
            SectionKind::Budgeted(size) => {
                format!("{heading} {}\n{text}", budget(section.file, size))
            }
            SectionKind::Note => text.to_owned(),
        });
    }
    parts.join("\n\n")
}

/// A section's heading: it names the file its facts came from.
fn heading(file: MemoryFile) -> &'static str {
    match file {
        MemoryFile::User => "## User context (USER.md)",
        MemoryFile::Memory => "## Workspace memory (MEMORY.md)",
        MemoryFile::GlobalUser => "## User context, every workspace (~/.metis/USER.md)",
    }
}

/// How full a file of `size` bytes is, as Hermes shows it: `[67% — 1,474/2,200 bytes]`,
/// against the hard cap (the size at which a write is refused), rounded down so that
/// 100% means refused.
fn budget(file: MemoryFile, size: u64) -> String {
    let cap = file.hard_cap();
    format!(
        "[{}% — {}/{} bytes]",
        size * 100 / cap,
        thousands(size),
        thousands(cap)
    )
}

/// `n` with a comma between each group of three digits.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;

    #[test]
    fn omits_empty_sections() {
        assert_eq!(assemble_system_prompt("base \n", " \n", ""), "base");
        assert_eq!(
            assemble_system_prompt("", "likes tea\n", ""),
            "## User context (USER.md)\nlikes tea"
        );
    }

    #[test]
    fn both_sections_in_order() {
        assert_eq!(
            assemble_system_prompt("  You are helpful.\n", "- tea\n", "- rust\n"),
            "  You are helpful.\n\n## User context (USER.md)\n- tea\n\n## Workspace memory (MEMORY.md)\n- rust"
        );
    }

    #[test]
    fn global_user_memory_comes_first_and_says_where_it_is_from() {
        let read = |file| {
            Ok(match file {
                MemoryFile::GlobalUser => b"- name: Sam\n".to_vec(),
                MemoryFile::User => b"- prefers tabs here\n".to_vec(),
                MemoryFile::Memory => b"- rust\n".to_vec(),
            })
        };
        let layout = PromptLayout {
            global_user: true,
            budget: false,
        };
        let composed = compose_system_prompt("base", read, AuditPolicy::Off, layout).unwrap();
        assert_eq!(
            composed.text,
            "base\n\n## User context, every workspace (~/.metis/USER.md)\n- name: Sam\n\n## User context (USER.md)\n- prefers tabs here\n\n## Workspace memory (MEMORY.md)\n- rust"
        );
        let files: Vec<MemoryFile> = composed.sources.iter().map(|s| s.file).collect();
        assert_eq!(
            files,
            [MemoryFile::GlobalUser, MemoryFile::User, MemoryFile::Memory]
        );
        let off =
            compose_system_prompt("base", read, AuditPolicy::Off, PromptLayout::default()).unwrap();
        assert_eq!(
            off.text,
            assemble_system_prompt("base", "- prefers tabs here\n", "- rust\n")
        );
        assert_eq!(off.sources.len(), 2);
    }

    #[test]
    fn a_file_that_is_not_text_is_left_out_with_a_note_and_the_other_composed() {
        let read = |file| {
            Ok(match file {
                MemoryFile::User => b"caf\xc3\xa9 \xff\n".to_vec(),
                _ => b"- rust\n".to_vec(),
            })
        };
        let composed =
            compose_system_prompt("base", read, AuditPolicy::Omit, PromptLayout::default())
                .unwrap();
        assert_eq!(
            composed.text,
            format!(
                "base\n\n{}\n\n## Workspace memory (MEMORY.md)\n- rust",
                not_text_note(MemoryFile::User, 6)
            )
        );
        assert!(
            composed.text.contains(
                "USER.md cannot be shown: it is not valid UTF-8 (first invalid byte at offset 6)"
            ) && composed.text.contains("`metis-memory audit USER.md`"),
            "{}",
            composed.text
        );
        // No version of it was shown, so none is among the sources a session takes in.
        let files: Vec<MemoryFile> = composed.sources.iter().map(|s| s.file).collect();
        assert_eq!(files, [MemoryFile::Memory]);
        let session = crate::session::Session::from_prompt(&composed.sources);
        assert_eq!(session.version(MemoryFile::User), None);
        assert!(session.withheld.is_empty());
        // The store's `assemble-system-prompt` fails instead, as its contract says.
        assert_eq!(
            compose_strict("base", read, AuditPolicy::Off, PromptLayout::default())
                .map(|composed| composed.text),
            Err(StoreError::InvalidUtf8 {
                file: MemoryFile::User,
                offset: 6
            })
        );
        // Another error still fails the composition: only a file that is not text is
        // left out.
        let busy = |_| {
            Err(StoreError::Busy {
                file: MemoryFile::User,
            })
        };
        assert!(
            compose_system_prompt("", busy, AuditPolicy::Off, PromptLayout::default()).is_err()
        );
    }

    #[test]
    fn the_budget_is_the_fill_level_against_the_hard_cap() {
        let memory = "- x\n".repeat(368) + "- yz\n";
        assert_eq!(memory.len(), 1477);
        let read = |file| {
            Ok(match file {
                MemoryFile::Memory => memory.clone().into_bytes(),
                _ => Vec::new(),
            })
        };
        let layout = PromptLayout {
            global_user: false,
            budget: true,
        };
        let composed = compose_system_prompt("", read, AuditPolicy::Off, layout).unwrap();
        assert!(
            composed
                .text
                .starts_with("## Workspace memory (MEMORY.md) [36% — 1,477/4,096 bytes]\n- x\n"),
            "{}",
            composed.text
        );
        assert_eq!(budget(MemoryFile::User, 3071), "[99% — 3,071/3,072 bytes]");
        assert_eq!(budget(MemoryFile::User, 3072), "[100% — 3,072/3,072 bytes]");
        assert_eq!(budget(MemoryFile::Memory, 0), "[0% — 0/4,096 bytes]");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}
