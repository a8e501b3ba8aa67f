"""The cache's key and entry format (`_cache`; docs/security.md, "The compiled-component
cache"): the entry's name holds the component's SHA-256 and the engine, its MAC binds that
name and the payload under this user's key, and its bytes are the ones the Rust host
writes and reads (the shared vector below is `host/src/cache/entry.rs`'s)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from wasmtime import Config, Engine
from wasmtime.component import Component

from metis_memory import _cache, _runtime

# The same key, name and payload as `host/src/cache/entry.rs`'s
# `the_entry_format_is_the_one_the_python_package_writes`, and the same MAC.
VECTOR_KEY = bytes(range(32))
VECTOR_NAME = "component-" + "0123456789abcdef" * 4 + "-test.cwasm"
VECTOR_MAC = "f9db434f851c4af61e75e5b61494b20e39e3e216fa2d17c321c3ac7ebf9fafa2"
# The component with no exports: another component than the store's.
EMPTY_COMPONENT = b"\0asm\x0d\x00\x01\x00"


def engine() -> Engine:
    """An engine with the package's settings."""
    config = Config()
    config.consume_fuel = True
    config.memory_init_cow = not _cache.file_size_limited()
    return Engine(config)


def test_the_entry_format_is_the_one_the_rust_host_writes() -> None:
    entry = _cache.seal(VECTOR_KEY, VECTOR_NAME, b"payload")
    assert entry[:28] == b"metis-memory cache entry v1\n"
    assert entry[28:60].hex() == VECTOR_MAC
    assert entry[60:] == b"payload"
    assert _cache.open_entry(VECTOR_KEY, VECTOR_NAME, entry) == b"payload"


def test_a_changed_moved_or_foreign_entry_is_refused() -> None:
    key, name = bytes([1]) * 32, "component-aa-py-1.cwasm"
    entry = _cache.seal(key, name, b"compiled code")
    assert _cache.open_entry(key, name, entry) == b"compiled code"
    assert _cache.open_entry(bytes([2]) * 32, name, entry) is None, "another key"
    assert _cache.open_entry(key, "component-bb-py-1.cwasm", entry) is None, "another component"
    assert _cache.open_entry(key, "component-aa-py-2.cwasm", entry) is None, "another engine"
    for at in range(len(entry)):
        changed = bytearray(entry)
        changed[at] ^= 1
        assert _cache.open_entry(key, name, bytes(changed)) is None, f"byte {at}"
    assert _cache.open_entry(key, name, entry[:-1]) is None
    assert _cache.open_entry(key, name, entry + b"\0") is None
    for cut in (0, 10, 28, 59):
        assert _cache.open_entry(key, name, entry[:cut]) is None, f"cut at {cut}"


def test_the_entry_name_holds_the_component_hash_and_the_engine(tmp_path: Path) -> None:
    wasm = _runtime.component_bytes()
    path = _cache.cache_path(tmp_path, wasm)
    digest = hashlib.sha256(wasm).hexdigest()
    assert path.name == f"component-{digest}-{_cache.engine_name()}.cwasm"
    assert "wasmtime" in _cache.engine_name()
    assert _cache.cache_path(tmp_path, EMPTY_COMPONENT) != path


def test_an_entry_for_another_component_is_not_loaded_for_this_one(tmp_path: Path) -> None:
    """A test of the cache key must fail when the component's hash is dropped from it.
    Here an entry of this user's, with a right MAC, holds another component (one
    wasmtime accepts for this engine); looking up the store's component must not find it,
    which it would if the name did not tell the two apart."""
    key = _cache.user_key()
    assert key is not None, "this user's cache key can be had"
    eng = engine()
    other = Component(eng, EMPTY_COMPONENT)
    _cache.store_cached(_cache.cache_path(tmp_path, EMPTY_COMPONENT), other, key)
    assert _cache.load_cached(eng, _cache.cache_path(tmp_path, EMPTY_COMPONENT), key) is not None
    store_entry = _cache.cache_path(tmp_path, _runtime.component_bytes())
    assert _cache.load_cached(eng, store_entry, key) is None


def test_an_entry_moved_to_another_name_is_not_loaded(tmp_path: Path) -> None:
    key = _cache.user_key()
    assert key is not None
    eng = engine()
    source = _cache.cache_path(tmp_path, EMPTY_COMPONENT)
    _cache.store_cached(source, Component(eng, EMPTY_COMPONENT), key)
    moved = _cache.cache_path(tmp_path, b"another component's bytes")
    source.rename(moved)
    assert _cache.load_cached(eng, moved, key) is None
