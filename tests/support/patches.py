"""Real patches for the patching tests: trees written from dicts, patches made by GNU diff between two
trees (as people make them), series files with the right checksums, and a hash of every file of a tree
(.git included) to prove a failed apply changed nothing."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

from tests.support.tools import need

BASE = "".join(f"int line{i} = {i};\n" for i in range(1, 41))


def write_tree(root: Path, files: dict[str, bytes | str]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    return root


def make_patch(work: Path, name: str, before: dict, after: dict) -> Path:
    """A real patch: `diff -ruN a b` between two trees, as people make them."""
    need("diff")
    gen = work / f"gen-{name}"
    shutil.rmtree(gen, ignore_errors=True)
    write_tree(gen / "a", before)
    write_tree(gen / "b", after)
    (gen / "a").mkdir(exist_ok=True)
    (gen / "b").mkdir(exist_ok=True)
    proc = subprocess.run(["diff", "-ruN", "a", "b"], cwd=gen, capture_output=True)
    assert proc.returncode == 1, proc.stderr
    patch = work / "patches" / name
    patch.parent.mkdir(parents=True, exist_ok=True)
    patch.write_bytes(proc.stdout)
    return patch


def write_series(patch_dir: Path, entries: list[tuple[str, str, str]]) -> Path:
    """entries: (patch name, phase, extra fields such as 'when=hipdnn')."""
    lines = []
    for name, phase, extra in entries:
        sha = hashlib.sha256((patch_dir / name).read_bytes()).hexdigest()
        lines.append(f"# Why {name} exists.\n{name} phase={phase} sha256={sha}{' ' + extra if extra else ''}\n")
    series = patch_dir / "series"
    series.write_text("".join(lines))
    return series


def hashes(root: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mode of every file under root, .git included."""
    out = {}
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            out[path.relative_to(root).as_posix()] = (hashlib.sha256(path.read_bytes()).hexdigest(),
                                                      stat.S_IMODE(path.lstat().st_mode))
    return out


def edited(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


AFTER = edited(edited(BASE, "int line10 = 10;\n", "int line10 = 100;\n"), "int line30 = 30;\n", "long line30 = 30;\n")
