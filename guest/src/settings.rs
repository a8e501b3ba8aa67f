//! What a host configured, as the `store.settings` record of a `workspace` gives it. The
//! plain calls use the defaults. Nothing is read from the environment: a setting a host
//! misspells does not build, where an environment variable would silently mean "off".

use metis_memory_core::PromptLayout;
use metis_memory_core::global_user::GlobalUserMode;

use crate::exports::metis::memory::store;

#[derive(Clone, Copy, Default)]
pub(crate) struct Settings {
    /// Every write is refused with `read-only` before it touches anything, whatever the
    /// host's sandbox would also refuse, so every host says the same.
    pub read_only: bool,
    /// `.metis/` is on a filesystem mounted read-only: a write is still tried (the mount
    /// may have changed), and an `io` failure of one is then `read-only`.
    pub read_only_mount: bool,
    /// Global user memory: `None` when off, else who writes the person's own USER.md.
    pub global_user: Option<GlobalUserMode>,
    /// Each prompt heading ends with its file's fill level.
    pub prompt_budget: bool,
    /// The token this instance's write names its lock and temporary file after, so that
    /// the host can clean up after a trap (`recover-after-trap`); random when unset.
    pub owner: Option<u64>,
}

impl Settings {
    /// The prompt's layout before the directories are looked at (see `prompt_layout`).
    pub(crate) fn prompt_layout(&self) -> PromptLayout {
        PromptLayout {
            global_user: self.global_user.is_some(),
            budget: self.prompt_budget,
        }
    }
}

impl From<store::Settings> for Settings {
    fn from(settings: store::Settings) -> Self {
        Settings {
            read_only: settings.read_only,
            read_only_mount: settings.read_only_mount,
            global_user: settings.global_user.map(|mode| match mode {
                store::GlobalUserMode::Read => GlobalUserMode::Read,
                store::GlobalUserMode::Write => GlobalUserMode::Write,
            }),
            prompt_budget: settings.prompt_budget,
            owner: settings.owner,
        }
    }
}
