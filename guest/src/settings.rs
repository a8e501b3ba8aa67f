//! What the host says about this instance, in its environment (`wasi:cli/environment`).

use alloc::string::String;

use metis_memory_core::PromptLayout;
use metis_memory_core::global_user::GlobalUserMode;

/// Whether the host opened the workspace read-only (`METIS_MEMORY_READ_ONLY=1`): every
/// write is refused with `read-only` before it touches anything, whatever the host's
/// sandbox would also refuse, so every host says the same.
pub(crate) fn read_only() -> bool {
    environment_says("METIS_MEMORY_READ_ONLY")
}

/// Whether the host found `.metis/` on a filesystem mounted read-only
/// (`METIS_MEMORY_READ_ONLY_FS=1`): a write is still tried (the mount may have changed),
/// and an `io` failure is then `read-only`.
pub(crate) fn filesystem_read_only() -> bool {
    environment_says("METIS_MEMORY_READ_ONLY_FS")
}

/// This call's owner token: the host's (`METIS_MEMORY_OWNER`, hex), so that it can remove
/// this call's lock and temporary file if the instance traps; random otherwise.
pub(crate) fn owner_token() -> u64 {
    wasip2::cli::environment::get_environment()
        .into_iter()
        .find(|(name, _)| name == "METIS_MEMORY_OWNER")
        .and_then(|(_, hex)| u64::from_str_radix(&hex, 16).ok())
        .unwrap_or_else(wasip2::random::random::get_random_u64)
}

/// Global user memory, as the host set it (`METIS_MEMORY_GLOBAL_USER`, see `wit/world.wit`):
/// `None` when off, else who writes the user's own USER.md.
pub(crate) fn global_user_mode() -> Option<GlobalUserMode> {
    match environment_value("METIS_MEMORY_GLOBAL_USER")?.as_str() {
        "read" => Some(GlobalUserMode::Read),
        "write" => Some(GlobalUserMode::Write),
        _ => None,
    }
}

/// The prompt's layout: global user memory, and the budget in the headings
/// (`METIS_MEMORY_PROMPT_BUDGET=1`).
pub(crate) fn prompt_layout() -> PromptLayout {
    PromptLayout {
        global_user: global_user_mode().is_some(),
        budget: environment_says("METIS_MEMORY_PROMPT_BUDGET"),
    }
}

fn environment_value(variable: &str) -> Option<String> {
    wasip2::cli::environment::get_environment()
        .into_iter()
        .find(|(name, _)| name == variable)
        .map(|(_, value)| value)
}

fn environment_says(variable: &str) -> bool {
    wasip2::cli::environment::get_environment()
        .iter()
        .any(|(name, value)| name == variable && value == "1")
}
