//! The docs show the WIT: keep it the WIT. `docs/api.md` holds the listing the README
//! links to.

#[test]
fn api_doc_shows_every_wit_file_verbatim() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let doc = std::fs::read_to_string(format!("{root}/docs/api.md")).unwrap();
    let mut shown = 0;
    for entry in std::fs::read_dir(format!("{root}/wit")).unwrap() {
        let path = entry.unwrap().path();
        let wit = std::fs::read_to_string(&path).unwrap();
        assert!(
            doc.contains(&format!("```wit\n{wit}```")),
            "docs/api.md does not show {} as it is",
            path.display()
        );
        shown += 1;
    }
    assert_eq!(shown, 4, "every WIT file is in docs/api.md");
}

#[test]
fn readme_links_the_api_doc() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    assert!(
        readme.contains("](docs/api.md)"),
        "README.md should link docs/api.md, where the WIT is shown"
    );
}

#[test]
fn conformance_readme_states_the_case_count() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/conformance");
    let (mut cases, mut suites) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let suite: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            cases += suite["cases"].as_array().unwrap().len();
            suites += 1;
        }
    }
    let readme = std::fs::read_to_string(format!("{dir}/README.md")).unwrap();
    let claim = format!("{cases} cases in {suites} suites");
    assert!(
        readme.contains(&claim),
        "tests/conformance/README.md should say \"{claim}\""
    );
}

/// The README's cost table is `BENCHMARKS.md`'s summary, copied by `scripts/bench`: a
/// figure edited by hand in one and not the other fails here.
#[test]
fn readme_cost_table_is_the_benchmarks_summary() {
    let root = env!("CARGO_MANIFEST_DIR").to_owned() + "/..";
    let block = |name: &str| {
        let text = std::fs::read_to_string(format!("{root}/{name}")).unwrap();
        let (begin, end) = ("<!-- bench-summary:begin -->", "<!-- bench-summary:end -->");
        let start = text
            .find(begin)
            .unwrap_or_else(|| panic!("{name}: no {begin}"));
        let stop = text.find(end).unwrap_or_else(|| panic!("{name}: no {end}"));
        text[start..stop].to_owned()
    };
    let summary = block("BENCHMARKS.md");
    assert!(summary.lines().count() >= 6, "{summary}");
    assert_eq!(block("README.md"), summary);
}

// The README's examples, every fenced block of it, run or checked so that they cannot
// drift. Each block's language says who covers it:
//
// - `rust`: run as a doctest (`ReadmeDoctests` in host/src/lib.rs), never `ignore`d;
// - `console` with `$ metis-memory …` lines: run here in a temporary directory with the
//   built CLI, the output compared exactly (a session that runs `python3` is run by
//   bindings/python/tests/test_readme.py against the installed wheel);
// - `sh`: commands too slow or too global to run here (`cargo install`, `scripts/…`):
//   each is checked to name what the repository has;
// - `json`: the MCP configuration, parsed and its server started with its `args`;
// - `python`, `js`: run by bindings/python/tests/test_readme.py and
//   bindings/node/test/readme.test.js against the installed packages;
// - `text`: not run, and must say so in a `<!-- readme-test: not run (why) -->` line
//   before it.
//
// A block in any other language fails `every_readme_block_is_covered`.

const BIN: &str = env!("CARGO_BIN_EXE_metis-memory");
const NOT_RUN: &str = "<!-- readme-test: not run (";

fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// One fenced block: its info string's first word, the line before its fence, its body
/// and the line it starts on.
struct Block {
    lang: String,
    info: String,
    before: String,
    body: String,
    line: usize,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut lines = markdown.lines().enumerate();
    let mut previous = "";
    while let Some((n, line)) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut body = String::new();
            for (_, inner) in lines.by_ref() {
                if inner.starts_with("```") {
                    break;
                }
                body.push_str(inner);
                body.push('\n');
            }
            found.push(Block {
                lang: info.split_whitespace().next().unwrap_or("").to_owned(),
                info: info.to_owned(),
                before: previous.to_owned(),
                body,
                line: n + 1,
            });
        }
        previous = line;
    }
    found
}

fn readme_blocks() -> Vec<Block> {
    blocks(&std::fs::read_to_string(repo_root().join("README.md")).unwrap())
}

/// A console block's commands (`$ ` lines) and the output shown after each.
fn session(body: &str) -> Vec<(String, String)> {
    let mut steps: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        if let Some(command) = line.strip_prefix("$ ") {
            steps.push((command.to_owned(), String::new()));
        } else {
            let (_, output) = steps.last_mut().expect("a console block starts with `$ `");
            output.push_str(line);
            output.push('\n');
        }
    }
    steps
}

fn runs_python(body: &str) -> bool {
    session(body)
        .iter()
        .any(|(command, _)| command.contains("python3"))
}

#[test]
fn every_readme_block_is_covered() {
    let root = repo_root();
    let lib = std::fs::read_to_string(root.join("host/src/lib.rs")).unwrap();
    let python_test = root.join("bindings/python/tests/test_readme.py");
    let node_test = root.join("bindings/node/test/readme.test.js");
    let mut problems = Vec::new();
    for block in readme_blocks() {
        let at = format!("README.md line {} (```{})", block.line, block.info);
        match block.lang.as_str() {
            "rust" => {
                if block.info.trim() != "rust" {
                    problems.push(format!("{at}: a Rust example runs as a doctest, unmarked"));
                }
                assert!(lib.contains("#[doc = include_str!(\"../../README.md\")]"));
            }
            "console" if runs_python(&block.body) => assert!(python_test.exists()),
            "console" | "sh" | "json" => {}
            "python" => assert!(python_test.exists()),
            "js" => assert!(node_test.exists()),
            "text" if block.before.starts_with(NOT_RUN) => {}
            "text" => problems.push(format!("{at}: say why it is not run: {NOT_RUN}…) -->")),
            _ => problems.push(format!("{at}: no test runs or checks this block")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Runs a console session in one bash process, in a fresh directory, with the built
/// CLI first on `PATH`; returns each command's output (stdout and stderr as a terminal
/// shows them) and exit status.
fn run_session(steps: &[(String, String)]) -> Vec<(String, i32)> {
    let dir = tempfile::tempdir().unwrap();
    let mut script = String::new();
    for (i, (command, _)) in steps.iter().enumerate() {
        script.push_str(&format!(
            "printf '\\036{i}\\036'\n{command}\nprintf '\\037%d' $?\n"
        ));
    }
    let bin_dir = std::path::Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let out = std::process::Command::new("bash")
        .args([
            "--noprofile",
            "--norc",
            "-c",
            &format!("exec 2>&1\n{script}"),
        ])
        .current_dir(dir.path())
        .env("PATH", path)
        .env("TMPDIR", dir.path())
        .env("METIS_MEMORY_CACHE_DIR", dir.path().join("cache"))
        .env_remove("METIS_WORKSPACE")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut results = Vec::new();
    for (i, part) in text.split('\u{1e}').skip(2).step_by(2).enumerate() {
        let (output, status) = part.rsplit_once('\u{1f}').unwrap();
        results.push((output.to_owned(), status.trim().parse().unwrap()));
        assert!(i < steps.len());
    }
    results
}

#[test]
fn readme_console_sessions_print_what_they_show() {
    let mut sessions = 0;
    for block in readme_blocks() {
        if block.lang != "console" || runs_python(&block.body) {
            continue;
        }
        let steps = session(&block.body);
        let results = run_session(&steps);
        assert_eq!(results.len(), steps.len(), "README.md line {}", block.line);
        for ((command, shown), (printed, status)) in steps.iter().zip(&results) {
            assert_eq!(
                (printed.as_str(), *status),
                (shown.as_str(), 0),
                "README.md line {}: `{command}` prints (and exits with) something else",
                block.line
            );
        }
        sessions += 1;
    }
    assert!(sessions >= 2, "the install check and the quick start");
}

#[test]
fn readme_sh_commands_name_what_the_repository_has() {
    let root = repo_root();
    let read = |path: &str| {
        std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let readme = read("README.md");
    let manifest = read("Cargo.toml");
    let rust_version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .expect("Cargo.toml sets rust-version")
        .trim_end_matches('"');
    let mut commands = 0;
    for block in readme_blocks().iter().filter(|b| b.lang == "sh") {
        for line in block.body.lines() {
            let command = line.split(" #").next().unwrap().trim();
            if command.is_empty() {
                continue;
            }
            commands += 1;
            let words: Vec<&str> = command.split_whitespace().collect();
            let at = format!("README.md line {}: `{command}`", block.line);
            match words.as_slice() {
                ["rustup", "target", "add", target] => {
                    assert!(
                        read("scripts/setup").contains(&format!("rustup target add {target}")),
                        "{at}"
                    );
                    assert!(
                        read("host/build.rs").contains(&format!("\"{target}\"")),
                        "{at}"
                    );
                }
                ["cargo", "install", "--path", dir] => {
                    let package = read(&format!("{dir}/Cargo.toml"));
                    assert!(package.contains("[[bin]]\nname = \"metis-memory\""), "{at}");
                    assert!(package.contains("rust-version.workspace = true"), "{at}");
                    assert!(
                        readme.contains(&format!("Rust {rust_version} or later")),
                        "{at}: the README states Rust {rust_version}"
                    );
                }
                ["python3", "-m", "pip", "install", artifact] | ["npm", "install", artifact] => {
                    let artifact = artifact.trim_start_matches("./");
                    assert!(
                        read("scripts/package").contains(artifact),
                        "{at}: scripts/package makes no {artifact}"
                    );
                }
                [script] if script.starts_with("scripts/") => {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = std::fs::metadata(root.join(script)).map(|m| m.permissions().mode());
                    assert!(
                        mode.is_ok_and(|m| m & 0o111 != 0),
                        "{at}: not an executable script"
                    );
                }
                _ => panic!("{at}: no test checks this command"),
            }
        }
    }
    assert!(commands >= 7, "{commands} commands");
}

#[test]
fn readme_mcp_configuration_starts_the_server() {
    let blocks: Vec<Block> = readme_blocks()
        .into_iter()
        .filter(|b| b.lang == "json")
        .collect();
    assert_eq!(blocks.len(), 1);
    let config: serde_json::Value = serde_json::from_str(&blocks[0].body).unwrap();
    let server = &config["mcpServers"]["metis-memory"];
    assert_eq!(server["command"], "metis-memory");
    let project = tempfile::tempdir().unwrap();
    let placeholder = "/path/to/project";
    let args: Vec<String> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            a.as_str()
                .unwrap()
                .replace(placeholder, project.path().to_str().unwrap())
        })
        .collect();
    assert!(
        blocks[0].body.contains(placeholder),
        "the workspace is {placeholder}"
    );
    // No client: the end of input ends a session that started, with status 0.
    let out = std::process::Command::new(BIN)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .env("METIS_MEMORY_CACHE_DIR", project.path().join(".cache"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "metis-memory {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
