//! The built component's interface, read back from the binary: the names other hosts
//! address, and every import it needs (a new import fails here until it is reviewed).

use std::collections::BTreeSet;

use metis_memory::COMPONENT_WASM;
use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime::component::types::ComponentItem;

fn instance_items(engine: &Engine, item: &ComponentItem) -> BTreeSet<String> {
    match item {
        ComponentItem::ComponentInstance(instance) => instance
            .exports(engine)
            .map(|(name, _)| name.to_owned())
            .collect(),
        other => panic!("expected an instance, got {other:?}"),
    }
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn exports_store_and_tools_by_their_wit_names() {
    let engine = Engine::default();
    let component = Component::new(&engine, COMPONENT_WASM).unwrap();
    let ty = component.component_type();
    let exports: Vec<_> = ty.exports(&engine).collect();
    let names: Vec<&str> = exports.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        ["metis:memory/store@0.4.0", "metis:memory/tools@0.4.0"]
    );
    // Beside the reference's calls, one tool call with options.
    assert_eq!(
        instance_items(&engine, &exports[1].1.ty),
        set(&[
            "memory-file",
            "write-result",
            "file-version",
            "scan-policy",
            "session",
            "workspace",
            "tool-definition",
            "operation",
            "memory-updated",
            "eviction-trigger",
            "memory-eviction",
            "memory-event",
            "tool-success",
            "tool-error",
            "call-options",
            "call-outcome",
            "definitions",
            "call",
            "call-with-options",
            "next-response",
        ])
    );
    // Beside the reference's calls, the settings' workspace with one write, one prompt
    // composition and the session's update and show; no `describe-error`.
    assert_eq!(
        instance_items(&engine, &exports[0].1.ty),
        set(&[
            "memory-file",
            "write-result",
            "store-error",
            "audit-finding",
            "scan-policy",
            "session",
            "read",
            "exists",
            "size-bytes",
            "add-entry",
            "replace",
            "consolidate",
            "soft-cap",
            "hard-cap",
            "assemble-system-prompt",
            "audit",
            "landing",
            "recover-after-trap",
            "global-user-mode",
            "settings",
            "edit",
            "replacement",
            "write-options",
            "audit-policy",
            "compose-options",
            "prompt-source",
            "composed-prompt",
            "session-update",
            "shown-file",
            "workspace",
            "[constructor]workspace",
            "[method]workspace.write",
            "[method]workspace.compose",
            "[method]workspace.update",
            "[method]workspace.show",
            "[method]workspace.hold-writes",
            "write-hold",
            "[method]write-hold.renew",
        ])
    );
}

#[test]
fn imports_exactly_the_reviewed_interfaces_and_functions() {
    let engine = Engine::default();
    let component = Component::new(&engine, COMPONENT_WASM).unwrap();
    // Every imported interface, with its version, and the names inside it: a new
    // interface, another version, or one more function or type fails here until reviewed.
    let imports: Vec<String> = component
        .component_type()
        .imports(&engine)
        .map(|(name, item)| {
            let items: Vec<String> = instance_items(&engine, &item.ty).into_iter().collect();
            format!("{name}: {}", items.join(" "))
        })
        .collect();
    // Exactly what the guest's own code calls (it is no_std, so Rust's runtime adds
    // nothing): the filesystem, random bits (temporary file names, back-off jitter), the
    // wall clock (lock leases), the monotonic clock and poll (waiting for the lock), and
    // the environment (the host's owner token and settings), and whether two pre-opened
    // directories are one (a workspace at home). No sockets, no HTTP, no stdio.
    let reviewed = REVIEWED_IMPORTS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty());
    let reviewed: Vec<String> = reviewed.map(str::to_owned).collect();
    assert_eq!(
        imports,
        reviewed,
        "the component's imports changed: review them\n{}",
        imports.join("\n")
    );
}

/// One line per imported interface: its versioned name, then the names it must provide.
const REVIEWED_IMPORTS: &str = "
metis:memory/types@0.4.0: audit-finding cap-exceeded changed file-error file-version flagged invalid-utf8 memory-file not-unique own-write poisoned scan-policy session store-error too-large unsynced write-result
wasi:io/poll@0.2.12: [method]pollable.block pollable
wasi:clocks/monotonic-clock@0.2.12: duration instant now pollable subscribe-duration
wasi:clocks/wall-clock@0.2.12: datetime
wasi:random/random@0.2.12: get-random-u64
wasi:filesystem/types@0.2.12: [method]descriptor.get-type [method]descriptor.is-same-object [method]descriptor.link-at [method]descriptor.open-at [method]descriptor.read [method]descriptor.read-directory [method]descriptor.rename-at [method]descriptor.stat [method]descriptor.stat-at [method]descriptor.sync [method]descriptor.unlink-file-at [method]descriptor.write [method]directory-entry-stream.read-directory-entry datetime descriptor descriptor-flags descriptor-stat descriptor-type directory-entry directory-entry-stream error-code filesize link-count open-flags path-flags
wasi:filesystem/preopens@0.2.12: descriptor get-directories
";
