"""Through the Python package: a compiled component planted in a
repository is never run.

The attack, for real: a cache entry this user's package wrote is taken, its machine code
(the `.text` section of wasmtime's ELF artifact) replaced by x86-64 code that calls
`exit_group(42)`, and the result committed to a fake checkout under the predictable name,
where a checkout can make the cache directory: `XDG_CACHE_HOME` (`$PWD/.cache` in a CI
job) and `METIS_MEMORY_CACHE_DIR` (`${PWD}/tools/cache` from an env file), with the modes
`git clone` gives (0644 files in 0755 directories, this user's). Whatever check the entry
carries that an attacker can compute is recomputed (the plain SHA-256 the cache used to
keep); a MAC under the user's key cannot be. `audit`, `read` and `add_entry` then run
there in new processes: none may exit 42, each must do its work, and the planted file
must have been compiled afresh (replaced), never loaded."""

from __future__ import annotations

import hashlib
import os
import platform
import struct
import subprocess
import sys
from pathlib import Path

import pytest

# x86-64: mov eax, 231; mov edi, 42; syscall (exit_group(42)).
EXIT_42 = bytes([0xB8, 0xE7, 0, 0, 0, 0xBF, 0x2A, 0, 0, 0, 0x0F, 0x05])
# The cache's format before entries carried a MAC: this header, the payload's SHA-256 in
# hex and a newline, then the payload. An attacker recomputes that checksum.
UNKEYED_MAGIC = b"metis-memory compiled component\n"

SCRIPT = """
import sys, metis_memory
from metis_memory import _runtime
store = metis_memory.MemoryStore(sys.argv[1])
op = sys.argv[2]
if op == "audit":
    store.audit("MEMORY.md")
elif op == "read":
    print(store.read("MEMORY.md"), end="")
elif op == "add":
    store.add_entry("MEMORY.md", "- tests run with pytest")
print(_runtime.runtime().loaded_from, file=sys.stderr)
"""


def section(elf: bytes, name: str) -> tuple[int, int]:
    """The file offset and size of the ELF section `name` (ELF64, little-endian)."""
    assert elf[:5] == b"\x7fELF\x02", "an ELF64 image"
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    strtab = struct.unpack_from("<Q", elf, shoff + shstrndx * shentsize + 24)[0]
    for i in range(shnum):
        header = shoff + i * shentsize
        at = strtab + struct.unpack_from("<I", elf, header)[0]
        if elf[at : elf.index(b"\0", at)] == name.encode():
            return struct.unpack_from("<QQ", elf, header + 24)
    raise AssertionError(f"no {name} section")


def plant_exit_42(entry: bytes) -> bytes:
    """The entry with every byte of `.text` a `nop` and `exit_group(42)` at its end, so a
    call into any function slides down to the exit; a checksum an attacker can compute is
    recomputed, anything else kept as it is."""
    elf_at = entry.index(b"\x7fELF")
    elf = bytearray(entry[elf_at:])
    offset, size = section(bytes(elf), ".text")
    assert size > len(EXIT_42)
    elf[offset : offset + size] = b"\x90" * (size - len(EXIT_42)) + EXIT_42
    if entry.startswith(UNKEYED_MAGIC):
        return UNKEYED_MAGIC + hashlib.sha256(elf).hexdigest().encode() + b"\n" + bytes(elf)
    return entry[:elf_at] + bytes(elf)


def clean_env(**env: str) -> dict[str, str]:
    base = {
        k: v for k, v in os.environ.items() if k not in ("METIS_MEMORY_CACHE_DIR", "XDG_CACHE_HOME")
    }
    return dict(base, **env)


def run(checkout: Path, op: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(checkout), op],
        cwd=checkout,
        env=clean_env(**env),
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def commit(path: Path, data: bytes, checkout: Path) -> None:
    """Writes `data` at `path` as a clone would: 0644, in 0755 directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    directory = path.parent
    while directory != checkout:
        directory.chmod(0o755)
        directory = directory.parent
    path.write_bytes(data)
    path.chmod(0o644)


def test_a_compiled_component_planted_in_a_checkout_is_never_run(tmp_path: Path) -> None:
    if platform.machine() not in ("x86_64", "AMD64") or not sys.platform.startswith("linux"):
        pytest.skip("the planted machine code is x86-64 Linux code (exit_group(42))")
    own = tmp_path / "own-cache"
    done = run(tmp_path, "read", METIS_MEMORY_CACHE_DIR=str(own))
    assert done.returncode == 0, done.stderr
    [real] = sorted(own.glob("*.cwasm"))
    planted = plant_exit_42(real.read_bytes())
    assert planted != real.read_bytes()

    checkout = tmp_path / "checkout"
    commit(checkout / ".metis" / "MEMORY.md", b"- the build uses cargo\n", checkout)
    places = [
        ("XDG_CACHE_HOME", checkout / ".cache", checkout / ".cache" / "metis-memory"),
        ("METIS_MEMORY_CACHE_DIR", checkout / "tools" / "cache", checkout / "tools" / "cache"),
    ]
    ran_planted = []
    for variable, value, directory in places:
        target = directory / real.name
        for op in ("audit", "read", "add"):
            commit(target, planted, checkout)
            done = run(checkout, op, **{variable: str(value)})
            if done.returncode == 42:
                ran_planted.append(f"{variable}: {op}")
                continue
            assert done.returncode == 0, f"{variable}: {op}: {done.stderr}"
            assert done.stderr.strip().endswith("compiled"), f"{variable}: {op}: {done.stderr}"
            if op == "read":
                assert done.stdout == "- the build uses cargo\n"
            assert target.read_bytes() != planted, f"{variable}: {op}: the planted file was kept"
        (checkout / ".metis" / "MEMORY.md").write_bytes(b"- the build uses cargo\n")
        if not ran_planted:
            # What replaced it is an entry of this user's, which the next process loads.
            done = run(checkout, "read", **{variable: str(value)})
            assert done.stderr.strip().endswith("cache"), done.stderr
    assert not ran_planted, "these ran the planted machine code (exit 42): " + ", ".join(
        ran_planted
    )
