//! `tests/surfaces/global_user_places.json`, the table every surface runs: each case's
//! directories set up on disk, and its steps checked, with the surface supplying only how
//! a step is run. Shared by the library and CLI driver (`global_user.rs`) and the MCP one
//! (`mcp_stdio.rs`).
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The table's rows.
pub fn cases() -> (Vec<Value>, String) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/surfaces/global_user_places.json");
    let table: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let refusal = table["refusal"].as_str().unwrap().to_owned();
    (table["cases"].as_array().unwrap().clone(), refusal)
}

/// One case's directories, made in a temporary directory of its own.
pub struct Place {
    pub dir: tempfile::TempDir,
    pub case: Value,
}

/// How one step went on a surface.
pub enum Outcome {
    /// The call ran: whether it wrote, and its text (the success text or the refusal).
    Ran { ok: bool, text: String },
    /// The call failed before the tool ran (a workspace the host refused).
    Failed(String),
    /// Not a step this surface runs.
    Skipped,
}

impl Place {
    pub fn new(case: &Value) -> Place {
        let place = Place {
            dir: tempfile::tempdir().unwrap(),
            case: case.clone(),
        };
        for dir in place.list("dirs") {
            fs::create_dir_all(place.path(&dir)).unwrap();
        }
        for (file, text) in place.map("given") {
            let path = place.path(&file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text.as_str().unwrap()).unwrap();
        }
        for (link, target) in place.map("links") {
            std::os::unix::fs::symlink(place.path(target.as_str().unwrap()), place.path(&link))
                .unwrap();
        }
        for (path, mode) in place.map("modes") {
            let mode = u32::from_str_radix(mode.as_str().unwrap(), 8).unwrap();
            fs::set_permissions(place.path(&path), fs::Permissions::from_mode(mode)).unwrap();
        }
        place
    }

    pub fn name(&self) -> &str {
        self.case["name"].as_str().unwrap()
    }

    /// `relative`, under the case's directory.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn field(&self, key: &str) -> PathBuf {
        self.path(self.case[key].as_str().unwrap())
    }

    pub fn home(&self) -> PathBuf {
        self.field("home")
    }

    pub fn global_dir(&self) -> PathBuf {
        self.field("global_dir")
    }

    pub fn workspace(&self) -> PathBuf {
        self.field("workspace")
    }

    /// Where the CLI and the MCP server are started.
    pub fn start(&self) -> PathBuf {
        match self.case["start"].as_str() {
            Some(start) => self.path(start),
            None => self.workspace(),
        }
    }

    /// `off`, `read` or `write`.
    pub fn mode(&self) -> &str {
        self.case["global_user"].as_str().unwrap()
    }

    pub fn flag(&self, key: &str) -> bool {
        self.case[key].as_bool().unwrap_or(false)
    }

    /// The options the CLI and the MCP server are given for this case (no --workspace).
    pub fn cli_args(&self) -> Vec<String> {
        let mut args = vec!["--global-user".to_owned(), self.mode().to_owned()];
        if self.global_dir() != self.home().join(".metis") {
            args.push("--global-user-dir".to_owned());
            args.push(self.global_dir().to_str().unwrap().to_owned());
        }
        if self.flag("follow_metis_link") {
            args.push("--allow-metis-link".to_owned());
        }
        if self.flag("trust_foreign_metis") {
            args.push("--trust-foreign-metis".to_owned());
        }
        args
    }

    fn list(&self, key: &str) -> Vec<String> {
        self.case[key]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|v| v.as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn map(&self, key: &str) -> Vec<(String, Value)> {
        self.case[key]
            .as_object()
            .map(|map| map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }

    /// Runs every step, `run` running the `tool` and `person_add` steps on the surface;
    /// the first step that went otherwise than the table says, named.
    pub fn run(&self, surface: &str, mut run: impl FnMut(&Value) -> Outcome) -> Result<(), String> {
        let steps = self.case["steps"].as_array().unwrap();
        for (n, step) in steps.iter().enumerate() {
            let at = format!("{surface}: {}: step {}", self.name(), n + 1);
            if let Some(files) = step["files"].as_object() {
                for (file, expected) in files {
                    let path = self.path(file);
                    match expected.as_str() {
                        None if path.symlink_metadata().is_ok() => {
                            return Err(format!("{at}: {file} exists, and should not"));
                        }
                        None => {}
                        Some(text) => {
                            let found = fs::read_to_string(&path).ok();
                            if found.as_deref() != Some(text) {
                                return Err(format!("{at}: {file} is {found:?}, not {text:?}"));
                            }
                        }
                    }
                }
                continue;
            }
            let expect = &step["expect"];
            match run(step) {
                Outcome::Skipped => {}
                Outcome::Failed(text) => {
                    if expect["error"] != true {
                        return Err(format!("{at}: failed: {text}"));
                    }
                    contains(&at, expect, &text)?;
                }
                Outcome::Ran { ok, text } => {
                    if expect["error"] == true {
                        return Err(format!("{at}: ran (ok: {ok}) where it should fail: {text}"));
                    }
                    if let Some(want) = expect["ok"].as_bool()
                        && ok != want
                    {
                        return Err(format!("{at}: ok was {ok}, not {want}: {text}"));
                    }
                    contains(&at, expect, &text)?;
                }
            }
        }
        Ok(())
    }
}

fn contains(at: &str, expect: &Value, text: &str) -> Result<(), String> {
    for want in expect["text_contains"].as_array().into_iter().flatten() {
        let want = want.as_str().unwrap();
        if !text.contains(want) {
            return Err(format!("{at}: the text lacks {want:?}: {text}"));
        }
    }
    Ok(())
}
