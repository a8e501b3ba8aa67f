//! Why a command failed, and how that is shown: the reason on stderr and, with `--json`,
//! `{"error": {...}}` on stdout, for every failure (clap's argument errors too), so a
//! script reading stdout always gets one JSON value.

use metis_memory::Error;
use serde_json::json;

/// Why a command failed: the store or the runtime refused (exit 1), or the input given
/// to the command was unusable (exit 2, like the argument errors clap reports).
pub enum Failure {
    Store(Error),
    /// Refused, with the outcome already printed (a tool call, `audit`'s findings).
    Refused,
    /// Refused by the CLI itself (exit 1): `kind` is a stable key for scripts.
    Cli {
        kind: &'static str,
        message: String,
    },
    /// The input was unusable (exit 2); nothing was run.
    Usage(String),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Store(error)
    }
}

/// A usage error (exit 2): `error: MESSAGE` on stderr and, with `--json`,
/// `{"error": {"kind": "usage", "message"}}` on stdout.
pub fn usage_error(json: bool, message: &str) {
    complain!("error: {message}");
    if json {
        print_error(json!({ "kind": "usage", "message": message }));
    }
}

/// An error of clap's (a missing argument, an unknown option): printed as clap prints
/// it and, with `--json`, also as `{"error": {"kind": "usage", "message", "usage"}}`.
/// Help and the version are printed as asked, whatever `--json` says.
pub fn clap_error(error: clap::Error) -> std::process::ExitCode {
    let _ = error.print();
    let code = error.exit_code();
    // Help and the version exit 0; help shown for a missing command exits 2, an error.
    let is_output = code == 0;
    if json_asked() && !is_output {
        let text = error.render().to_string();
        // clap's text: the message (its list of arguments on the lines after), a blank
        // line, the usage line, a pointer to --help.
        let message = text
            .lines()
            .take_while(|line| !line.trim().is_empty() && !line.starts_with("Usage: "))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        let message = message.trim_start_matches("error: ");
        let usage = text.lines().find(|line| line.starts_with("Usage: "));
        print_error(json!({ "kind": "usage", "message": message, "usage": usage }));
    }
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// Whether `--json` is among the arguments (before a `--`): when clap cannot parse them,
/// this is all there is to go by.
fn json_asked() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|arg| arg != "--")
        .any(|arg| arg == "--json")
}

pub fn print_error(error: serde_json::Value) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout().lock(), "{:#}", json!({ "error": error }));
}
