//! Builds the component from `guest/` for `wasm32-wasip2` with the `wasm` size profile,
//! so the host always embeds the component of the same checkout (it is never committed).

use std::env;
use std::path::PathBuf;
use std::process::Command;

use sha2::Digest;

#[path = "wasm_sections.rs"]
mod wasm_sections;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    // The nested cargo gets its own target directory: the outer build holds the lock on
    // the workspace's, and waiting for it would deadlock.
    let target_dir = out_dir.join("guest-target");

    // Everything the component is built from: a change to any of it rebuilds the guest,
    // so the embedded component never goes stale.
    for path in ["guest", "core", "scan", "wit", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }

    release_version(&root);

    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args([
            "build",
            "--package",
            "metis-memory-guest",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "wasm",
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        // The outer build's flags and wrappers (clippy, coverage) are for the host target.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .status()
        .expect("failed to run cargo to build the guest component");
    if !status.success() {
        panic!(
            "building the guest component failed; is the target installed? \
             run `rustup target add wasm32-wasip2`"
        );
    }

    let built = target_dir.join("wasm32-wasip2/wasm/metis_memory_guest.wasm");
    let wasm =
        std::fs::read(&built).unwrap_or_else(|e| panic!("cannot read {}: {e}", built.display()));
    let wasm = without_component_names(&wasm);
    std::fs::write(out_dir.join("metis_memory.wasm"), &wasm)
        .unwrap_or_else(|e| panic!("cannot write the component: {e}"));
    // The key of the compiled-component cache (host/src/cache/), so that a process
    // need not hash the component to find it.
    let digest = sha2::Sha256::digest(&wasm);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=METIS_COMPONENT_SHA256={hex}");
}

/// The component without its top-level `component-name` section: the names of its inner
/// instances and functions, which the profile's `strip` leaves (it strips the core
/// module) and nothing reads but a trap's backtrace, about 7 KB. Every other section is
/// kept byte for byte.
fn without_component_names(wasm: &[u8]) -> Vec<u8> {
    let mut kept = wasm[..wasm_sections::HEADER].to_vec();
    for section in wasm_sections::sections(wasm) {
        if section.custom_name() != Some(b"component-name") {
            kept.extend_from_slice(section.whole);
        }
    }
    kept
}

/// The release's one version is the WIT package's (`wit/world.wit`): the CLI and the MCP
/// server report it (`METIS_VERSION`), and the crates must say the same, so a release
/// cannot name two versions.
fn release_version(root: &std::path::Path) {
    let world = root.join("wit/world.wit");
    let text = std::fs::read_to_string(&world)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", world.display()));
    let version = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("package metis:memory@"))
        .and_then(|rest| rest.strip_suffix(';'))
        .unwrap_or_else(|| {
            panic!(
                "{} names no `package metis:memory@VERSION;`",
                world.display()
            )
        });
    let crate_version = env::var("CARGO_PKG_VERSION").unwrap();
    if version != crate_version {
        panic!(
            "the crates say version {crate_version} but wit/world.wit says {version}: the WIT package's version names the release; set [workspace.package] version in Cargo.toml to it"
        );
    }
    println!("cargo:rustc-env=METIS_VERSION={version}");
}
