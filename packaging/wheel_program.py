"""Copies the program out of a `metis-memory-cli` wheel (its `*.data/scripts/metis-memory`,
`metis-memory.exe` on Windows), executable, into a folder, and prints its path: the npm
platform package holds the same binary as the wheel (scripts/package, the release workflow).

    python packaging/wheel_program.py WHEEL DIR
"""

import os
import stat
import sys
import zipfile
from pathlib import Path


def main() -> None:
    wheel, out = sys.argv[1:]
    with zipfile.ZipFile(wheel) as archive:
        names = [
            n
            for n in archive.namelist()
            if n.split("/")[-2:-1] == ["scripts"]
            and n.split("/")[-1] in ("metis-memory", "metis-memory.exe")
            and n.split("/")[0].endswith(".data")
        ]
        if len(names) != 1:
            sys.exit(f"{wheel}: {len(names)} programs in its scripts, not one: {names}")
        target = Path(out) / names[0].split("/")[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(names[0]))
    os.chmod(target, os.stat(target).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    print(target)


if __name__ == "__main__":
    main()
