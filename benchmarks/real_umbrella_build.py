"""Build times of AMD's real umbrella EP (recipe umbrella-ep-real, hip backend on) inside a Debian build root.

    python benchmarks/real_umbrella_build.py [--root NAME|DIR] [--jobs N] [--skip-cold]
    python benchmarks/real_umbrella_build.py --root debian-sid-rocm7        # the ROCm 7 wheel

Prints, for one machine:
  cold build        fresh build folder, empty ccache (its own CCACHE_DIR), wheel included
  no-op rebuild     the same command again: every stage skipped
  ccache-warm build a fresh build folder, the ccache of the cold build (paths relative to the work tree)
  wheel size        the repaired wheel
  machine           CPUs, memory, load average before the run, kernel

Every toolkit command runs without network (bwrap --unshare-net); dependencies come from the shared mirror.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.buildroot_support import SID_ROOT  # noqa: E402
from tests.support.real_umbrella_support import MIRROR, PROJECT, binds, toolkit_env, toolkit_python  # noqa: E402
from toolkit.buildroot import ensure_root, run_in_root  # noqa: E402


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
               if line.startswith("MemTotal")) / 2**20
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return f"{os.cpu_count()} CPUs ({cpu}), {mem:.0f} GiB, load average {load}, Linux {platform.release()}"


def build(root: Path, python: Path, build_dir: Path, ccache: Path, jobs: int) -> float:
    args = [str(python), "-m", "toolkit", "build", "--recipe", "umbrella-ep-real", "--mirror", MIRROR.as_uri(),
            "--offline", "--with-hipdnn", "--wheel", "--jobs", str(jobs), "--build-dir", str(build_dir)]
    env = {**toolkit_env(python), "CCACHE_DIR": str(ccache)}
    started = time.monotonic()
    proc = run_in_root(root, args, binds=binds(), env=env, cwd=PROJECT, network=False, check=False, capture=True)
    took = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"build failed (exit {proc.returncode}):\n{(proc.stdout + proc.stderr)[-4000:]}")
    return took


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=None, metavar="NAME|DIR",
                   help="build root: a package set's name (debian-sid-rocm, debian-sid-rocm7) or a root folder "
                        "(default $TOOLKIT_BUILDROOT, else debian-sid-rocm)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--skip-cold", action="store_true", help="reuse the ccache of an earlier run (no cold build)")
    args = p.parse_args()
    name = SID_ROOT if args.root is None or Path(args.root).is_dir() else args.root
    root = Path(args.root) if args.root and Path(args.root).is_dir() else ensure_root(name)
    print(f"machine: {machine()}")
    print(f"root: {name} ({root})")
    python = toolkit_python(root, name)
    work = Path(tempfile.mkdtemp(prefix="real-umbrella-bench.", dir=PROJECT / "build"))
    ccache = PROJECT / "build" / "bench-ccache"
    try:
        if not args.skip_cold:
            shutil.rmtree(ccache, ignore_errors=True)
        ccache.mkdir(parents=True, exist_ok=True)
        first = build(root, python, work / "a", ccache, args.jobs)
        print(f"{'cold build' if not args.skip_cold else 'first build (ccache kept)'}: {first:.1f} s "
              f"(-j{args.jobs}, configure + build + check + wheel + repair)")
        print(f"no-op rebuild: {build(root, python, work / 'a', ccache, args.jobs):.1f} s")
        print(f"ccache-warm build, fresh build folder: {build(root, python, work / 'b', ccache, args.jobs):.1f} s")
        wheel = next((work / "b" / "umbrella-ep-real" / "release" / "wheelhouse").glob("*.whl"))
        print(f"wheel: {wheel.name}, {wheel.stat().st_size / 2**20:.2f} MiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
