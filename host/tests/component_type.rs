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
        ["metis:memory/store@0.1.0", "metis:memory/tools@0.1.0"]
    );
    assert_eq!(
        instance_items(&engine, &exports[1].1.ty),
        set(&[
            "memory-file",
            "write-result",
            "tool-definition",
            "operation",
            "memory-updated",
            "eviction-trigger",
            "memory-eviction",
            "memory-event",
            "tool-success",
            "tool-error",
            "scan-policy",
            "definitions",
            "call",
            "call-with-policy",
        ])
    );
    assert_eq!(
        instance_items(&engine, &exports[0].1.ty),
        set(&[
            "memory-file",
            "write-result",
            "store-error",
            "read",
            "exists",
            "size-bytes",
            "add-entry",
            "replace",
            "consolidate",
            "soft-cap",
            "hard-cap",
            "assemble-system-prompt",
            "describe-error",
        ])
    );
}

#[test]
fn imports_nothing_beyond_the_reviewed_list() {
    let engine = Engine::default();
    let component = Component::new(&engine, COMPONENT_WASM).unwrap();
    let imports: BTreeSet<String> = component
        .component_type()
        .imports(&engine)
        .map(|(name, _)| name.rsplit_once('@').map_or(name, |(n, _)| n).to_owned())
        .collect();
    // Exactly what the guest's own code calls (it is no_std, so Rust's runtime adds
    // nothing): the filesystem, random bits (temporary file names, back-off jitter), the
    // wall clock (lock leases), the monotonic clock and poll (waiting for the lock), and
    // the environment (the host's owner token). No sockets, no HTTP, no stdio.
    let reviewed = set(&[
        "metis:memory/types",
        "wasi:filesystem/types",
        "wasi:filesystem/preopens",
        "wasi:random/random",
        "wasi:clocks/wall-clock",
        "wasi:clocks/monotonic-clock",
        "wasi:io/poll",
        "wasi:cli/environment",
    ]);
    assert_eq!(
        imports, reviewed,
        "the component's imports changed: review them"
    );
}
