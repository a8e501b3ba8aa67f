//! The CLI's integration tests, linked into one binary (`cargo test --test integration`):
//! each of these links the library, wasmtime and cranelift, and one link instead of one per
//! file saves minutes on a fresh build. Each file below is a module, so a test's name starts
//! with its file's (`cli::…`, `properties::…`); `cargo test --test integration -- git::`
//! runs one file's tests.
//!
//! A new test file is added here as a module (`autotests = false` in Cargo.toml: cargo
//! finds no test file by itself). The shared helpers are `crate::common` and
//! `crate::global_user_places`. A file that needs a process of its own is a `[[test]]` of
//! its own in Cargo.toml instead, saying why: today `conformance`, `crash` and `surfaces`
//! (their own `main`, and `crash` and `surfaces` run their binary again as a child),
//! `kept_count` (it counts the instances the whole process makes) and
//! `planted_link_memory` (it limits the whole process's data segment).

mod common;
mod global_user_places;

mod cache_key;
mod cli;
mod cli_commands;
mod cli_edit;
mod cli_held;
mod cli_messages;
mod clocks;
mod compiled_cache;
mod component_type;
mod concurrency;
mod docs_links;
mod first_write;
mod foreign_metis;
mod git;
mod global_user;
mod hostile;
mod init;
mod integrity;
mod kept_instance;
mod mcp_stdio;
mod not_text;
mod planted_cache;
mod poisoning;
mod properties;
mod readme;
mod runtime;
mod store;
mod swapped_metis;
mod untrusted;
