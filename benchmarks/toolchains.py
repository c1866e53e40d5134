"""Build times of AMD's real umbrella EP per toolchain, side by side in one run, inside the Debian sid root.

    python benchmarks/toolchains.py [--root DIR] [--jobs N] [--toolchains system,zig] [--warm-only] [--repeat N]

For each toolchain (`build --toolchain NAME`, hip backend on, wheel included):
  cold        fresh build folder, empty ccache of its own, and for zig an empty zig cache (libc++ built again)
  ccache-warm another fresh build folder with the ccache (and zig cache) the cold build filled
(--repeat N: N ccache-warm builds per toolchain, in turns, and their median; the ratio of each toolchain's
median to the first's is printed last), then the wheel each made: its manylinux tag (auditwheel's) and the
highest GLIBC symbol version it needs.
Each build also prints its stages' times and ccache's verdicts for its own compiler calls (CCACHE_STATSLOG):
where a warm build's time goes.
--warm-only skips the cold builds and uses the toolkit's own ccache and zig cache: one untimed build per
toolchain first fills them where earlier builds did not (a changed wrapper or compiler misses every entry);
quicker, and what a developer's second build of a fresh work tree costs.
Prints the machine (CPUs, memory, load average before the run). Every toolkit command runs without network
(bwrap --unshare-net); the sources come from the shared mirror. Reuses benchmarks/real_umbrella_build.py's
machine line and tests/support/real_umbrella_support.py's root, venv, binds and environment.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from real_umbrella_build import machine  # noqa: E402

from tests.support.buildroot_support import SID_ROOT  # noqa: E402
from tests.support.real_umbrella_support import MIRROR, PROJECT, binds, toolkit_env, toolkit_python  # noqa: E402
from toolkit.binary.elf import highest_version, version_needs  # noqa: E402
from toolkit.buildroot import ensure_root, run_in_root  # noqa: E402


def build(root: Path, python: Path, build_dir: Path, caches: Path | None, toolchain: str, jobs: int) -> float:
    args = [str(python), "-m", "toolkit", "build", "--recipe", "umbrella-ep-real", "--mirror", MIRROR.as_uri(),
            "--offline", "--with-hipdnn", "--wheel", "--jobs", str(jobs), "--build-dir", str(build_dir),
            "--toolchain", toolchain]
    env = toolkit_env(python)
    if caches is not None:
        env.update(CCACHE_DIR=str(caches / "ccache"), ZIG_GLOBAL_CACHE_DIR=str(caches / "zig"))
    # Where the time goes: ccache's verdict per compiler call of this build only (its stats log), and the stages.
    stats_log = build_dir.parent / f"{build_dir.name}-ccache.log"
    env["CCACHE_STATSLOG"] = str(stats_log)
    started = time.monotonic()
    proc = run_in_root(root, args, binds=binds(), env=env, cwd=PROJECT, network=False, check=False, capture=True)
    took = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"{toolchain} build failed (exit {proc.returncode}):\n{(proc.stdout + proc.stderr)[-4000:]}")
    stages = ", ".join(f"{m.group(1)} {float(m.group(2)):.0f} s" for m in _STAGE.finditer(proc.stdout + proc.stderr))
    print(f"  {build_dir.name}: {stages}; ccache: {ccache_verdicts(stats_log)}", flush=True)
    return took


_STAGE = re.compile(r"\[toolkit\] (\w[\w-]*): done in ([\d.]+)s")


def ccache_verdicts(stats_log: Path) -> str:
    """`direct_cache_hit 700, cache_miss 3, ...` from ccache's stats log (one verdict line per call)."""
    try:
        lines = stats_log.read_text().splitlines()
    except OSError:
        return "no stats log (ccache not used)"
    counts = Counter(line.strip() for line in lines if line.strip() and not line.startswith("#"))
    verdicts = {name: n for name, n in counts.items() if name in _VERDICTS}  # one per call; the rest are details
    return ", ".join(f"{name} {n}" for name, n in sorted(verdicts.items(), key=lambda v: -v[1])) or "no calls"


# ccache's final verdict for a call (its stats log also lists the storage lookups behind each).
_VERDICTS = {"direct_cache_hit", "preprocessed_cache_hit", "cache_miss", "called_for_link", "called_for_preprocessing",
             "compile_failed", "preprocessor_error", "could_not_use_precompiled_header", "no_input_file",
             "multiple_source_files", "unsupported_compiler_option", "autoconf_test", "compiler_produced_stdout"}


def wheel_facts(build_dir: Path) -> tuple[str, str]:
    """(the wheel's platform tag, the highest GLIBC version any of its libraries needs)."""
    wheel = next((build_dir / "umbrella-ep-real" / "release" / "wheelhouse").glob("*.whl"))
    highest = []
    with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as scratch:
        for name in archive.namelist():
            if name.endswith(".so"):
                target = Path(archive.extract(name, scratch))
                highest.append(highest_version(version_needs(target), "GLIBC") or "0")
    top = max(highest, key=lambda v: tuple(int(p) for p in v.split(".")))
    return wheel.name.rsplit("-", 1)[1].removesuffix(".whl"), top


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=None,
                   help="build root (default $TOOLKIT_BUILDROOT, else the toolkit's debian-sid-rocm root)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--toolchains", default="system,zig", help="comma-separated toolchains to compare")
    p.add_argument("--warm-only", action="store_true",
                   help="no cold builds: the toolkit's own ccache and zig cache, as earlier builds left them")
    p.add_argument("--repeat", type=int, default=1,
                   help="ccache-warm builds per toolchain, taken in turns (system, zig, system, ...); the median "
                        "counts")
    args = p.parse_args()
    root = args.root or ensure_root(SID_ROOT)
    print(f"machine: {machine()}", flush=True)
    python = toolkit_python(root)
    toolchains = args.toolchains.split(",")
    cold: dict[str, float] = {}
    warm: dict[str, list[float]] = {t: [] for t in toolchains}
    facts: dict[str, tuple[str, str]] = {}
    work = Path(tempfile.mkdtemp(prefix="toolchains-bench.", dir=PROJECT / "build"))

    def caches(toolchain: str) -> Path | None:
        return None if args.warm_only else work / toolchain / "caches"

    try:
        for toolchain in toolchains if args.warm_only else ():
            build(root, python, work / toolchain / "priming", None, toolchain, args.jobs)
            shutil.rmtree(work / toolchain / "priming", ignore_errors=True)
        for toolchain in toolchains if not args.warm_only else ():
            folder = caches(toolchain)
            assert folder is not None
            folder.mkdir(parents=True)
            cold[toolchain] = build(root, python, work / toolchain / "cold", folder, toolchain, args.jobs)
            print(f"{toolchain}: cold {cold[toolchain]:.0f} s", flush=True)
        # In turns, so that a change in the machine's load falls on every toolchain alike.
        for round_ in range(args.repeat):
            for toolchain in toolchains:
                folder = work / toolchain / f"warm{round_}"
                warm[toolchain].append(build(root, python, folder, caches(toolchain), toolchain, args.jobs))
                print(f"{toolchain}: ccache-warm {warm[toolchain][-1]:.1f} s", flush=True)
                facts[toolchain] = wheel_facts(folder)
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nreal umbrella (hip backend on, wheel included), -j{args.jobs}, {machine()}")
    print(f"{'toolchain':<10} {'cold':>8} {'ccache-warm':>12} {'(runs)':<24} {'wheel tag':<40} highest GLIBC needed")
    for toolchain in toolchains:
        spelled = f"{cold[toolchain]:>7.0f}s" if toolchain in cold else f"{'-':>8}"
        runs = ", ".join(f"{t:.1f}" for t in warm[toolchain])
        tag, glibc = facts[toolchain]
        print(f"{toolchain:<10} {spelled} {statistics.median(warm[toolchain]):>11.1f}s {runs:<24} {tag:<40} {glibc}")
    if len(toolchains) > 1:
        base = statistics.median(warm[toolchains[0]])
        for toolchain in toolchains[1:]:
            print(f"ccache-warm {toolchain} / {toolchains[0]}: {statistics.median(warm[toolchain]) / base:.2f} "
                  f"(medians of {args.repeat})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
