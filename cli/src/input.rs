//! The text a command is given: as an argument, or on stdin for `-` or none; bounded, so
//! no input reaches the component that it cannot hold.

use std::io::{IsTerminal, Read};

use super::Failure;

/// The most text the CLI passes to one call, whether an argument or stdin: 1 MiB, 256
/// times the largest hard cap (4096 B), so nothing useful is refused, and well inside what
/// the component's 64 MiB of memory holds while it parses and checks it (a 24 MB tool
/// call, or a 66 MB entry, ran it out of memory: a trap instead of the store's answer).
pub const INPUT_LIMIT: usize = 1 << 20;

/// A text argument as given, or read from stdin when it is `-` or missing. Stdin must not
/// be empty (`consolidate FILE </dev/null` would empty the file by accident: an empty
/// file takes an explicit `""`); on a terminal, the person is told it is being read.
pub fn text_or_stdin(given: Option<String>, what: &str) -> Result<String, Failure> {
    if let Some(text) = given.filter(|text| text != "-") {
        not_an_option(&text)?;
        within_limit(&text, what)?;
        return Ok(text);
    }
    if std::io::stdin().is_terminal() {
        complain!("reading {what} from standard input; end it with Ctrl-D (Ctrl-Z on Windows)");
    }
    let text = read_stdin(what)?;
    if text.is_empty() {
        return Err(Failure::Usage(format!(
            "standard input was empty, so no {what} was given and nothing was changed (to empty a file, pass \"\" as CONTENT to consolidate)"
        )));
    }
    Ok(text)
}

/// Text arguments may start with `-` (a markdown bullet), but one that starts with `--`
/// is taken for a mistyped option (`add MEMORY.md --jsn`), unless it follows `--`.
pub fn not_an_option(text: &str) -> Result<(), Failure> {
    let after_double_dash = std::env::args_os().any(|arg| arg == "--");
    if text.starts_with("--") && text.len() > 2 && !after_double_dash {
        return Err(Failure::Usage(format!(
            "unknown option {text}; to store text that starts with --, put -- before it (add MEMORY.md -- '{text}')"
        )));
    }
    Ok(())
}

/// Refuses a text argument larger than [`INPUT_LIMIT`], before any call.
pub fn within_limit(text: &str, what: &str) -> Result<(), Failure> {
    if text.len() > INPUT_LIMIT {
        return Err(too_large(&format!("{what} is {} bytes", text.len())));
    }
    Ok(())
}

fn too_large(what_is: &str) -> Failure {
    Failure::Usage(format!(
        "{what_is}, more than the {} MiB the CLI takes (the hard caps are 4096 B for MEMORY.md, 3072 B for USER.md); nothing was changed",
        INPUT_LIMIT >> 20
    ))
}

/// Stdin, read no further than one byte past the limit.
fn read_stdin(what: &str) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(INPUT_LIMIT as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Usage(format!("cannot read {what} from standard input: {e}")))?;
    if bytes.len() > INPUT_LIMIT {
        return Err(too_large(&format!(
            "the {what} on standard input is larger than {} bytes",
            INPUT_LIMIT
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        Failure::Usage(format!(
            "the {what} on standard input is not valid UTF-8 (first invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}
