//! `metis-memory`: inspect and edit a workspace's agent memory from a terminal or a script.

mod cli;

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use metis_memory::{
    AuditPolicy, CallOptions, Error, FileVersion, MemoryFile, ScanPolicy, Workspace,
};

use cli::Output;

/// Inspect and edit the bounded agent memory kept in a workspace's `.metis/`.
///
/// Files: MEMORY.md (workspace facts; soft cap 2048 B, hard cap 4096 B) and USER.md
/// (facts about the user; soft cap 1536 B, hard cap 3072 B). Every command runs the
/// metis-memory WebAssembly component, which sees only `.metis/`.
///
/// Exit status: 0 on success, 1 when the store refuses (the reason is printed on
/// stderr), 2 on a usage error.
#[derive(Parser)]
#[command(name = "metis-memory", version, max_term_width = 100)]
struct Args {
    /// The workspace whose `.metis/` holds the memory [default: $METIS_WORKSPACE, else the
    /// nearest directory with a .metis at or above the current one, up to the repository's
    /// root; else that root; else the current directory]
    #[arg(long, short = 'w', global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,

    /// Print machine-readable JSON on stdout (errors too, as {"error": {...}})
    #[arg(long, global = true)]
    json: bool,

    /// Use the workspace's .metis even if it is a symbolic link (refused by default: a
    /// cloned repository could point it at another project's memory)
    #[arg(long, global = true)]
    allow_metis_link: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a file's content (nothing when it is missing)
    Read {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
    },
    /// Print whether a file exists (exit status 0 either way)
    Exists {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
    },
    /// Print a file's size in bytes (0 when it is missing)
    Size {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
    },
    /// Append one entry as its own line (surrounding whitespace is stripped)
    Add {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
        /// The entry; must not be empty after stripping (may start with `-`, as a markdown
        /// bullet); `-` or nothing reads it from stdin
        #[arg(allow_hyphen_values = true)]
        entry: Option<String>,
    },
    /// Replace the one occurrence of OLD with NEW (NEW may be empty, to delete)
    Replace {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
        /// Text that must occur exactly once in the file
        #[arg(allow_hyphen_values = true)]
        old: String,
        /// Its replacement
        #[arg(allow_hyphen_values = true)]
        new: String,
    },
    /// Replace the whole file with CONTENT, byte for byte
    Consolidate {
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: MemoryFile,
        /// The new content; `-` or nothing reads it from stdin, which must not be empty
        /// (to empty the file, pass "" as CONTENT)
        #[arg(allow_hyphen_values = true)]
        content: Option<String>,
        /// Write only if the file's SHA-256 is still HASH (the version CONTENT was made
        /// from, e.g. from `status --json` or `sha256sum`); otherwise exit 1 and change
        /// nothing
        #[arg(long, value_name = "HASH", value_parser = parse_hash)]
        expect_hash: Option<String>,
    },
    /// Print the system prompt an agent host would send: base, USER.md, MEMORY.md
    ///
    /// With --json: {"prompt", "sources"}, each source with the SHA-256 of the file it was
    /// composed from (what `consolidate --expect-hash` takes) and the audit's findings.
    Prompt {
        /// The base system prompt the memory sections follow
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        base: String,
        /// What to do with a file the memory audit finds something in: off, report (on
        /// stderr), omit (leave it out of the prompt, and report), refuse (exit 1)
        #[arg(long, default_value = "off", value_name = "POLICY", value_parser = parse_audit_policy)]
        audit: AuditPolicy,
    },
    /// Scan the files on disk with the poisoning scan's rules and list what matches
    ///
    /// One line per finding: FILE:LINE: [rule] what matched. Exit status 1 when anything
    /// is found, so it works as a pre-commit hook or a CI step; 0 when nothing is.
    Audit {
        /// Only this file [default: both]
        #[arg(value_parser = parse_file, value_name = "FILE")]
        file: Option<MemoryFile>,
    },
    /// Show both files against their soft and hard caps, with their hashes
    Status,
    /// Print the memory tools' definitions as a JSON array for an LLM API
    Tools,
    /// Run one tool call and print {"is_error", "text", "result", "events"} as JSON
    ///
    /// Exit status 0 when the call wrote the file, 1 when it was refused (invalid input,
    /// unknown tool, or a write the store rejected: nothing changed).
    Call {
        /// memory_add, memory_replace or memory_consolidate
        tool: String,
        /// The tool input as JSON; `-` or nothing reads it from stdin
        #[arg(allow_hyphen_values = true)]
        input: Option<String>,
        /// Skip the memory poisoning scan (hidden characters, injection patterns)
        #[arg(long)]
        no_scan: bool,
        /// FILE=HASH: the version of FILE the model has seen; a memory_consolidate of FILE
        /// is refused unless the file is still that version (repeatable)
        #[arg(long, value_name = "FILE=HASH", value_parser = parse_seen)]
        seen: Vec<FileVersion>,
    },
    /// Serve the memory to an MCP client over stdio (the Model Context Protocol)
    ///
    /// Tools: memory_add, memory_replace, memory_consolidate, as `tools` prints them.
    /// Resources, read fresh on every request, with subscriptions: memory://MEMORY.md,
    /// memory://USER.md, memory://prompt. Prompt: `memory`. Standard output carries
    /// only protocol messages; logs go to stderr. Exit status 0 at the end of input, 2
    /// when the workspace named does not exist, 1 when its .metis cannot be used.
    Mcp {
        /// Skip the memory poisoning scan on tool calls (as `call --no-scan`)
        #[arg(long)]
        no_scan: bool,
    },
    /// Write the embedded WebAssembly component, for hosts in other languages
    /// (wasmtime-py, jco) or for `wasm-tools component wit`
    Component {
        /// Where to write it; `-` writes to stdout
        #[arg(long, short = 'o', value_name = "FILE")]
        output: PathBuf,
    },
}

/// FILE: `MEMORY.md` or `USER.md` (or `memory`, `user`).
fn parse_file(name: &str) -> Result<MemoryFile, String> {
    MemoryFile::parse(name)
        .ok_or_else(|| format!("expected MEMORY.md or USER.md (or memory, user), got `{name}`"))
}

/// HASH: a SHA-256 as 64 hex digits.
fn parse_hash(hash: &str) -> Result<String, String> {
    if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(hash.to_ascii_lowercase())
    } else {
        Err(format!("expected a SHA-256 as 64 hex digits, got `{hash}`"))
    }
}

/// FILE=HASH, for `call --seen`.
fn parse_seen(text: &str) -> Result<FileVersion, String> {
    let (file, hash) = text
        .split_once('=')
        .ok_or_else(|| format!("expected FILE=HASH, got `{text}`"))?;
    Ok(FileVersion {
        file: parse_file(file)?,
        sha256: parse_hash(hash)?,
    })
}

fn parse_audit_policy(name: &str) -> Result<AuditPolicy, String> {
    AuditPolicy::parse(name)
        .ok_or_else(|| format!("expected off, report, omit or refuse, got `{name}`"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (root, located) = match cli::locate::locate(args.workspace) {
        Ok(found) => found,
        Err(message) => {
            cli::complain!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let mut workspace = Workspace::open(root);
    if args.allow_metis_link {
        workspace = workspace.follow_metis_link();
    }
    if let Command::Mcp { no_scan } = args.command {
        return cli::mcp::serve(workspace, scan_policy(no_scan));
    }
    let out = Output {
        json: args.json,
        located,
    };
    match run(&workspace, args.command, &out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Store(error)) => {
            out.error(&error);
            ExitCode::from(1)
        }
        Err(Failure::Refused) => ExitCode::from(1),
        Err(Failure::Usage(message)) => {
            cli::complain!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Why a command failed: the store or the runtime refused (exit 1), or the input given
/// to the command was unusable (exit 2, like the argument errors clap reports).
enum Failure {
    Store(Error),
    /// A tool call was refused; its outcome is already printed.
    Refused,
    Usage(String),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Store(error)
    }
}

fn run(ws: &Workspace, command: Command, out: &Output) -> Result<(), Failure> {
    match command {
        Command::Read { file } => out.content(file, &ws.read(file)?),
        Command::Exists { file } => out.exists(file, ws.exists(file)?),
        Command::Size { file } => out.size(file, ws.size_bytes(file)?),
        Command::Add { file, entry } => {
            let entry = text_or_stdin(entry, "ENTRY")?;
            out.write(ws, &ws.add_entry(file, &entry)?)?
        }
        Command::Replace { file, old, new } => {
            not_an_option(&old)?;
            not_an_option(&new)?;
            out.write(ws, &ws.replace(file, &old, &new)?)?
        }
        Command::Consolidate {
            file,
            content,
            expect_hash,
        } => {
            let content = text_or_stdin(content, "CONTENT")?;
            let result = match expect_hash {
                Some(hash) => ws.consolidate_if_unchanged(file, &content, &hash)?,
                None => ws.consolidate(file, &content)?,
            };
            out.write(ws, &result)?
        }
        Command::Prompt { base, audit } => out.prompt(&ws.compose_system_prompt(&base, audit)?),
        Command::Audit { file } => {
            let files = file.map_or(MemoryFile::ALL.to_vec(), |file| vec![file]);
            let found = files
                .into_iter()
                .map(|file| Ok((file, ws.audit(file)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            if !out.audit(&found) {
                return Err(Failure::Refused);
            }
        }
        Command::Status => out.status(ws)?,
        Command::Tools => out.tool_definitions(&ws.tool_definitions()?),
        Command::Call {
            tool,
            input,
            no_scan,
            seen,
        } => {
            let input = text_or_stdin(input, "JSON")?;
            let options = CallOptions {
                scan: scan_policy(no_scan),
                seen,
                withheld: Vec::new(),
            };
            match ws.call_tool_with_options(&tool, &input, &options) {
                Ok(success) => out.tool_success(&success),
                Err(Error::Tool(refused)) => {
                    out.tool_refusal(&refused);
                    return Err(Failure::Refused);
                }
                Err(other) => return Err(other.into()),
            }
        }
        Command::Component { output } => write_component(&output)?,
        Command::Mcp { .. } => unreachable!("`mcp` is served before `run`"),
    }
    Ok(())
}

/// Both parts of the poisoning scan, or neither with `--no-scan`.
fn scan_policy(no_scan: bool) -> ScanPolicy {
    ScanPolicy {
        invisible_characters: !no_scan,
        injection_patterns: !no_scan,
    }
}

fn write_component(output: &std::path::Path) -> Result<(), Failure> {
    let written = if output.as_os_str() == "-" {
        std::io::stdout().write_all(metis_memory::COMPONENT_WASM)
    } else {
        write_new_file(output, metis_memory::COMPONENT_WASM)
    };
    written.map_err(|e| Failure::Usage(format!("cannot write {}: {e}", output.display())))
}

/// Writes `bytes` to a new file renamed into place at `path`: whatever stands there (a
/// link a repository planted, a FIFO) is replaced, never followed or opened.
fn write_new_file(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// A text argument as given, or read from stdin when it is `-` or missing. Stdin must not
/// be empty (`consolidate FILE </dev/null` would empty the file by accident: an empty
/// file takes an explicit `""`); on a terminal, the person is told it is being read.
fn text_or_stdin(given: Option<String>, what: &str) -> Result<String, Failure> {
    if let Some(text) = given.filter(|text| text != "-") {
        not_an_option(&text)?;
        return Ok(text);
    }
    if std::io::stdin().is_terminal() {
        cli::complain!(
            "reading {what} from standard input; end it with Ctrl-D (Ctrl-Z on Windows)"
        );
    }
    let text = read_stdin()?;
    if text.is_empty() {
        return Err(Failure::Usage(format!(
            "standard input was empty, so no {what} was given and nothing was changed (to empty a file, pass \"\" as CONTENT to consolidate)"
        )));
    }
    Ok(text)
}

/// Text arguments may start with `-` (a markdown bullet), but one that starts with `--`
/// is taken for a mistyped option (`add MEMORY.md --jsn`), unless it follows `--`.
fn not_an_option(text: &str) -> Result<(), Failure> {
    let after_double_dash = std::env::args_os().any(|arg| arg == "--");
    if text.starts_with("--") && text.len() > 2 && !after_double_dash {
        return Err(Failure::Usage(format!(
            "unknown option {text}; to store text that starts with --, put -- before it (add MEMORY.md -- '{text}')"
        )));
    }
    Ok(())
}

/// The most a command reads from stdin: what one call's memory limit can hold.
const STDIN_LIMIT: u64 = metis_memory::Limits::DEFAULT_MEMORY_BYTES;

fn read_stdin() -> Result<String, Failure> {
    let mut content = String::new();
    std::io::stdin()
        .take(STDIN_LIMIT + 1)
        .read_to_string(&mut content)
        .map_err(|e| Failure::Usage(format!("cannot read the content from stdin: {e}")))?;
    if content.len() as u64 > STDIN_LIMIT {
        return Err(Failure::Usage(format!(
            "the input on stdin is larger than {} MiB, more than one memory call can take",
            STDIN_LIMIT >> 20
        )));
    }
    Ok(content)
}
