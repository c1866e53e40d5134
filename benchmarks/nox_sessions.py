"""What switching nox sessions costs: `nox -s build`, then `wheel`, `build` and `list` in the same nox
envdir, each timed, with the environments nox left behind and their size.

    python benchmarks/nox_sessions.py

Every session shares one environment (<envdir>/toolkit), so only the first pays for pip, and a switch
from build to wheel reruns no stage before `wheel`. Prints the machine, each session's seconds and the
stages it ran, and the envdir's environments.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def size_mb(path: Path) -> float:
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_symlink()) / 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        envdir, build = Path(tmp) / "nox", Path(tmp) / "build"
        print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
        for name in ("build", "wheel", "build", "list"):
            args = [] if name == "list" else ["--build-dir", str(build)]
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "nox", "--envdir", str(envdir), "-s", name, "--", *args],
                                  cwd=ROOT, capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if proc.returncode != 0:
                sys.exit(f"nox -s {name} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
            out = proc.stdout + proc.stderr
            ran = re.search(r"stages run: (.*)", out)
            pip = "pip install" in out
            print(f"nox -s {name:<6} {seconds:7.1f} s  pip: {'yes' if pip else 'no ':<3}  "
                  f"stages run: {ran.group(1) if ran else '-'}")
        envs = [p for p in envdir.iterdir() if p.is_dir() and not p.name.startswith(".")]
        for env in envs:
            print(f"environment {env.name}: {size_mb(env):.0f} MB")
        print(f"{len(envs)} environment(s) for 3 sessions")


if __name__ == "__main__":
    main()
