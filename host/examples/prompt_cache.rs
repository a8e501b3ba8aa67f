//! What composing memory into the system prompt costs in a provider's prompt cache, per
//! session mode: one scripted session replayed through the real library (a scratch
//! workspace, the real component, real writes), its model requests priced under
//! Anthropic's caching rule. Prints a markdown section; `scripts/bench` appends it to
//! BENCHMARKS.md. By hand: `cargo run --release -p metis-memory --example prompt_cache`.
//!
//! Every figure counts bytes, so the output is the same on every run and machine.

use metis_memory::{MemoryFile, Session, Workspace};
use serde_json::json;

const TURNS: usize = 40;
/// Turns whose user message leads the model to a `memory_add`, and the file it adds to.
const OWN_WRITES: [(usize, MemoryFile); 4] = [
    (5, MemoryFile::Memory),
    (14, MemoryFile::User),
    (23, MemoryFile::Memory),
    (33, MemoryFile::Memory),
];
/// Turns before which another session on the same workspace adds to MEMORY.md (while
/// the user is typing, so a snapshot session's update can announce it in that turn).
const OTHER_WRITES: [(usize, &str); 2] = [
    (11, "- Staging deploys need `wg-quick up staging` first."),
    (27, "- CI pins Postgres 16, like the local compose file."),
];

const MEMORY_MD: &str = "\
- Workspace: a Rust service (axum + sqlx, Postgres 16) with a React admin UI in web/.
- Build with `cargo build --workspace`; the UI with `pnpm -C web build`.
- Tests: `cargo nextest run`; integration tests need `docker compose up db` first.
- Migrations live in migrations/; never edit an applied one, add a new file instead.
- CI runs clippy with -D warnings and rustfmt --check; fix both before pushing.
- Deploys go through scripts/deploy (staging first, then prod after a manual check).
- Config comes from env vars read in src/config.rs; .env.example lists them all.
- The billing module (src/billing/) is owned by another team: propose, don't change.
- Errors: thiserror in libraries, anyhow only in binaries and scripts.
- Logging with tracing; spans named after the handler, fields in snake_case.
- Feature flags are rows in the flags table, cached for 30 s by src/flags.rs.
- The nightly job reindexes search at 02:00 UTC; avoid schema changes near then.
- Flaky test: api::orders::concurrent_checkout, tracked in issue #482.
- Rate limits are per API key, configured in config/limits.toml.
- Releases are tagged vX.Y.Z from main; CHANGELOG.md is updated by hand.
- Benchmarks in benches/ use criterion; compare against the saved `main` baseline.
- The staging database is reset every Sunday; don't keep test data there.
- API docs are generated from the OpenAPI spec in docs/openapi.yaml; regenerate them.
- Money is stored as integer cents (i64), never floats; currency in a separate column.
";

const USER_MD: &str = "\
- Name: Dana; backend engineer, UTC+1, works mornings.
- Prefers short answers with the command first, explanation after.
- Reviews diffs before anything is committed; never push without asking.
- Likes property tests over example tests where they fit.
- Uses neovim and fish; not bash-only syntax in snippets.
- Writes British English in docs and commit messages.
- Wants the reason for a design choice before the alternatives.
";

/// A deterministic pseudo-random stream (splitmix64), so every mode replays the same
/// conversation and every run prints the same figures.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn between(&mut self, low: usize, high: usize) -> usize {
        low + (self.next() % (high - low + 1) as u64) as usize
    }

    /// Prose of `low..=high` bytes: only the sizes matter to the cache, not the words.
    fn text(&mut self, low: usize, high: usize) -> String {
        const WORDS: &str = "the handler returns a migration test fails when query cache \
            order build because config we should check error service and then retry log value";
        let words: Vec<&str> = WORDS.split_whitespace().collect();
        let target = self.between(low, high);
        let mut text = String::new();
        while text.len() < target {
            let word = words[self.next() as usize % words.len()];
            text.push_str(word);
            let stop = self.next().is_multiple_of(12);
            text.push(if stop { '.' } else { ' ' });
        }
        text.truncate(target);
        text
    }
}

/// One turn of the script, the same in every mode.
struct Turn {
    user: String,
    reply: String,
    /// The model's `memory_add` in this turn: its file and entry.
    write: Option<(MemoryFile, String)>,
}

fn script() -> (String, Vec<Turn>) {
    let mut rng = Rng(2026);
    // A stand-in for an agent's own instructions: about 3 KB that never change.
    let base = rng.text(3000, 3000);
    let turns = (0..TURNS)
        .map(|turn| Turn {
            user: rng.text(200, 600),
            reply: rng.text(300, 1200),
            write: OWN_WRITES
                .iter()
                .find(|(at, _)| *at == turn)
                .map(|&(_, file)| (file, format!("- {}", rng.text(60, 100).trim()))),
        })
        .collect();
    (base, turns)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// The reference's behaviour: the memory composed afresh before every model call.
    PerCall,
    /// `Session::snapshot`, with `memory_update` prefixed to the next user message.
    Snapshot,
    /// Hermes Agent: the prompt frozen for the session, no word of others' writes.
    Frozen,
}

/// What one replay cost.
#[derive(Default)]
struct Tally {
    calls: usize,
    system_changes: usize,
    written: usize,
    read: usize,
    input: usize,
    previous: Vec<u8>,
    previous_system: Option<String>,
}

impl Tally {
    /// One model call under automatic caching: the breakpoint sits at the end of the
    /// request, so the prefix it shares with the previous request (cached whole) is
    /// read and the rest written.
    fn request(&mut self, system: &str, tools: &str, messages: &[serde_json::Value]) {
        // Anthropic's order: the tools, then the system prompt, then the messages.
        let mut request = Vec::new();
        request.extend_from_slice(tools.as_bytes());
        request.extend_from_slice(system.as_bytes());
        for message in messages {
            request.extend_from_slice(message.to_string().as_bytes());
        }
        let common = request
            .iter()
            .zip(&self.previous)
            .take_while(|(a, b)| a == b)
            .count();
        self.calls += 1;
        self.read += common;
        self.written += request.len() - common;
        self.input += request.len();
        if self.previous_system.as_deref().is_some_and(|s| s != system) {
            self.system_changes += 1;
        }
        self.previous_system = Some(system.to_owned());
        self.previous = request;
    }

    /// Input-token equivalents: a cache write costs 1.25×, a read 0.1×; 4 bytes a token.
    fn cost(&self) -> f64 {
        (1.25 * self.written as f64 + 0.1 * self.read as f64) / 4.0
    }
}

fn replay(mode: Mode, base: &str, tools: &str, turns: &[Turn]) -> Tally {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path());
    ws.consolidate(MemoryFile::Memory, MEMORY_MD).unwrap();
    ws.consolidate(MemoryFile::User, USER_MD).unwrap();
    // Hermes is simulated by the snapshot session that never asks for an update.
    let mut session = match mode {
        Mode::PerCall => Session::new(ws.clone()),
        Mode::Snapshot | Mode::Frozen => Session::new(ws.clone()).snapshot(),
    };
    let mut other = Session::new(ws);
    let mut tally = Tally::default();
    let mut messages = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        if let Some((_, entry)) = OTHER_WRITES.iter().find(|(at, _)| *at == i) {
            let input = json!({"file": "MEMORY.md", "entry": entry}).to_string();
            other.call_tool("memory_add", &input).unwrap();
        }
        // Composed first: a snapshot session's update is news since the frozen prompt.
        let system = session.system_prompt(base).unwrap().text;
        let mut user = turn.user.clone();
        if mode == Mode::Snapshot
            && let Some(update) = session.memory_update().unwrap()
        {
            user = format!("{update}\n\n{user}");
        }
        messages.push(json!({"role": "user", "content": user}));
        tally.request(&system, tools, &messages);
        if let Some((file, entry)) = &turn.write {
            // The model answers with a tool call; its result goes back in a second call.
            let input = json!({"file": file.file_name(), "entry": entry});
            messages.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "name": "memory_add", "input": input}]}));
            let result = session.call_tool("memory_add", &input.to_string()).unwrap();
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "content": result.text}]}));
            let system = session.system_prompt(base).unwrap().text;
            tally.request(&system, tools, &messages);
        }
        messages.push(json!({"role": "assistant", "content": turn.reply}));
    }
    tally
}

/// The tool definitions as an LLM API takes them, the same bytes on every call.
fn tool_definitions() -> String {
    let dir = tempfile::tempdir().unwrap();
    let tools = Workspace::open(dir.path()).tool_definitions().unwrap();
    let tools = tools.iter().map(|tool| {
        json!({
            "name": tool.name,
            "description": tool.description,
            "input_schema": serde_json::from_str::<serde_json::Value>(&tool.input_schema).unwrap(),
        })
    });
    serde_json::Value::Array(tools.collect()).to_string()
}

fn main() {
    let (base, turns) = script();
    let tools = tool_definitions();
    let modes = [
        ("(a) per-call composition (the reference)", Mode::PerCall),
        ("(b) snapshot + `memory_update`", Mode::Snapshot),
        ("(c) frozen, no update (Hermes Agent)", Mode::Frozen),
    ];
    let tallies: Vec<_> = modes
        .iter()
        .map(|&(_, mode)| replay(mode, &base, &tools, &turns))
        .collect();
    let snapshot = tallies[1].cost();

    println!("## The prompt cache: per-call composition vs snapshot sessions\n");
    println!(
        "One scripted session replayed through the library in each mode (`host/examples/prompt_cache.rs`): {TURNS} turns (user messages 200–600 bytes, replies 300–1,200, from a fixed seed), {} `memory_add` calls by the session's own model (a turn with one makes two model calls: the tool call, then the reply to its result), {} by another session on the same workspace; MEMORY.md starts at {} bytes, USER.md at {}, under a {}-byte base prompt.\n",
        OWN_WRITES.len(),
        OTHER_WRITES.len(),
        MEMORY_MD.len(),
        USER_MD.len(),
        base.len(),
    );
    println!(
        "Caching as Anthropic prices it, with the breakpoint at the end of every request (automatic caching): the prefix a request shares byte for byte with the previous one is read from the cache (0.1× the input price), the rest written to it (1.25×); 4 bytes a token; every call within the cache's lifetime. Matching byte by byte flatters (a): a real cache matches whole blocks, so a change in the memory also loses the base prompt before it. Requests are laid out as Anthropic's API sends them: the tool definitions ({} tokens), the system prompt, the messages. (c) is Hermes Agent's behaviour simulated by the same replay: the prompt frozen for the session, the model told of writes only by its own tool results, never of another session's.\n",
        tools.len() / 4
    );
    println!(
        "| mode | model calls | calls with a changed system prompt | tokens written to cache | tokens read from cache | cost (input-token equivalents) | vs (b) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for ((label, _), tally) in modes.iter().zip(&tallies) {
        println!(
            "| {label} | {} | {} | {} | {} | {:.0} | {:.2}× |",
            tally.calls,
            tally.system_changes,
            tally.written / 4,
            tally.read / 4,
            tally.cost(),
            tally.cost() / snapshot
        );
    }
    println!(
        "\nWithout a cache the same requests would cost {} input tokens in (b).",
        tallies[1].input / 4
    );
}
