"""How close to free is a rebuild? Times `python -m toolkit build` on the bundled sample: cold, again
with nothing changed, with one feature turned on, and with one source file edited.

    python benchmarks/build_incremental.py [--runs N]

Prints the machine and the median of N runs of each case (each cold run in a fresh build folder).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def toolkit(build_folder: Path, *args: str, source: Path | None = None) -> float:
    cmd = [sys.executable, "-m", "toolkit", "-q", "build", "--build-dir", str(build_folder), *args]
    if source is not None:
        cmd += ["--source", str(source)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_NO_CCACHE": "1"}
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cases: dict[str, list[float]] = {"cold": [], "no change": [], "--with-hipdnn": [], "one file edited": []}
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            source = tmp / "umbrella-ep"
            shutil.copytree(ROOT / "samples" / "umbrella-ep", source)
            build = tmp / "build"
            cases["cold"].append(toolkit(build, source=source))
            cases["no change"].append(toolkit(build, source=source))
            cases["--with-hipdnn"].append(toolkit(build, "--with-hipdnn", source=source))
            profile = source / "src" / "umbrella" / "profile.cc"
            profile.write_text(profile.read_text() + "\n// edited\n")
            cases["one file edited"].append(toolkit(build, "--with-hipdnn", source=source))
    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}; ccache off; median of {args.runs}")
    cold = statistics.median(cases["cold"])
    for name, times in cases.items():
        median = statistics.median(times)
        print(f"{name:>16}: {median:6.2f} s  ({median / cold:5.1%} of cold)")


if __name__ == "__main__":
    main()
