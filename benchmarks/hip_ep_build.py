"""Build times of ROCm/hip-ep (recipe hip-ep, mock runtime, wheel included) inside the ROCm 7 build root.

    .nox/toolkit/bin/python benchmarks/hip_ep_build.py [--skip-cold] [--real] [--units N]

Prints, for one machine:
  cold build          a fresh build folder and an empty ccache of its own: ninja's step count, the wall time
  slowest units       the longest steps of that build (ninja's log), and their share of the summed step time
  no-op rebuild       the same command again: every stage skipped
  ccache-warm build   another fresh build folder (as a second clone's), the ccache of the first
  wheel size          the repaired wheel
  machine             CPUs, memory, load average before the run, kernel

With --skip-cold the first build uses the toolkit's own ccache (warm from earlier builds here) instead of an empty
one, so only the warm numbers are new. --real builds the real runtime (--without-mock: its GPU kernels too) instead
of the mock. Every toolkit command runs with -j<CPUs> and without network (bwrap --unshare-net).
docs/guides/building-hip-ep.md quotes these commands, not their figures, which are one machine's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.real_umbrella_build import machine  # noqa: E402
from tests.support.hip_ep_support import ROOT_NAME, build_args, toolkit  # noqa: E402
from tests.support.real_umbrella_support import PROJECT, toolkit_python  # noqa: E402
from toolkit.buildroot import ensure_root  # noqa: E402
from toolkit.buildroot.sandbox import ccache_dir  # noqa: E402
from toolkit.util.cachedir import default_cache_dir  # noqa: E402


def build(root: Path, python: Path, build_dir: Path, ccache: Path, extra: tuple[str, ...] = ()) -> float:
    started = time.monotonic()
    proc = toolkit(root, python, build_args(build_dir, "--wheel", *extra), env={"CCACHE_DIR": str(ccache)})
    took = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"build failed (exit {proc.returncode}):\n{(proc.stdout + proc.stderr)[-4000:]}")
    return took


def ninja_steps(cmake_dir: Path) -> list[tuple[float, str]]:
    """(seconds, output) of each step of the last build, from ninja's own log (one line per output)."""
    steps: dict[str, float] = {}
    for line in (cmake_dir / ".ninja_log").read_text().splitlines()[1:]:
        start, end, _mtime, output, _hash = line.split("\t")
        steps[output] = (int(end) - int(start)) / 1000
    return sorted(((s, o) for o, s in steps.items()), reverse=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skip-cold", action="store_true", help="first build with the toolkit's warm ccache")
    p.add_argument("--real", action="store_true", help="build the real runtime (--without-mock) instead of the mock")
    p.add_argument("--units", type=int, default=10, help="how many of the slowest steps to list (default 10)")
    args = p.parse_args()
    root = ensure_root(ROOT_NAME)
    print(f"machine: {machine()}")
    print(f"root: {ROOT_NAME} ({root}); -j{os.cpu_count() or 2}")
    python = toolkit_python(root, ROOT_NAME)
    work = Path(tempfile.mkdtemp(prefix="hip-ep-bench.", dir=PROJECT / "build"))
    ccache = ccache_dir(default_cache_dir()) if args.skip_cold else work / "ccache"
    ccache.mkdir(parents=True, exist_ok=True)
    extra = ("--without-mock",) if args.real else ()
    print(f"runtime: {'real (--without-mock)' if args.real else 'mock'}")
    try:
        first = build(root, python, work / "a", ccache, extra)
        steps = ninja_steps(work / "a" / "hip-ep" / "release" / "cmake")
        total = sum(s for s, _ in steps)
        print(f"{'cold build' if not args.skip_cold else 'first build (warm toolkit ccache)'}: {first:.1f} s, "
              f"{len(steps)} ninja steps, summed step time {total:.0f} s (configure + build + check + wheel + repair)")
        for seconds, output in steps[:args.units]:
            print(f"  {seconds:7.1f} s  {100 * seconds / total:4.1f}%  {output}")
        print(f"no-op rebuild: {build(root, python, work / 'a', ccache, extra):.1f} s")
        warm = build(root, python, work / "b", ccache, extra)
        print(f"ccache-warm build, fresh build folder: {warm:.1f} s")
        wheel = next((work / "b" / "hip-ep" / "release" / "wheelhouse").glob("*.whl"))
        print(f"wheel: {wheel.name}, {wheel.stat().st_size / 2**20:.1f} MiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
