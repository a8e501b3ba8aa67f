//! Colour for `status`'s states: on a terminal unless `NO_COLOR` is set, or as
//! `--color always|never` says (an explicit `always` wins over `NO_COLOR`, as
//! no-color.org asks of a per-invocation option).

use std::io::IsTerminal;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Whether to colour what goes to stdout.
    pub fn enabled(self) -> bool {
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
            }
        }
    }
}

/// SGR codes: a state that needs action now, one that will soon.
pub const RED: &str = "1;31";
pub const YELLOW: &str = "33";

/// `text` in the colour `sgr` when `on`, else as it is.
pub fn paint(on: bool, sgr: &str, text: &str) -> String {
    if on {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}
