"""How long a build root takes to make: cold (a fresh toolkit cache: every .deb downloaded), with the
package downloads cached (a rebuild after the package set changed), and reused. Prints the machine,
debootstrap and apt seconds, the root's size, and how long running a command inside takes.

    python benchmarks/buildroot_make.py                       # debian-sid-rocm (about 9 GB per root)
    python benchmarks/buildroot_make.py --set tests/x.toml    # another package set
    python benchmarks/buildroot_make.py --keep DIR            # keep the cache (and roots) in DIR
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit.buildroot import make, run_in_root  # noqa: E402
from toolkit.recipe import packageset  # noqa: E402
from toolkit.util import log  # noqa: E402


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    load = os.getloadavg()[0]
    return f"{platform.node()}: {os.cpu_count()} cores ({model}), load {load:.1f}, {platform.platform()}"


def one(label: str, spec: packageset.PackageSet, cache: Path) -> Path:
    os.environ["TOOLKIT_CACHE_DIR"] = str(cache)
    start = time.monotonic()
    root = make.make_root(spec, cache)
    total = time.monotonic() - start
    facts = make.info(root)
    print(f"{label:<34} total {total:7.1f} s   debootstrap {facts['seconds']['debootstrap']:6.1f} s   "
          f"apt {facts['seconds']['apt']:6.1f} s   size {log.human_size(facts['bytes'])}", flush=True)
    return root


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default=packageset.DEFAULT, help="package set name or .toml path")
    parser.add_argument("--keep", type=Path, help="cache folder to use and keep (default: a temporary one)")
    args = parser.parse_args()
    os.environ.pop(make.ENV_BUILDROOT, None)
    spec = packageset.load(args.set)
    cache = args.keep or Path(tempfile.mkdtemp(prefix="buildroot-bench-"))
    print(machine())
    print(f"package set {spec.file} ({len(spec.packages)} packages asked for), cache {cache}")
    try:
        root = one("cold (nothing cached)", spec, cache)
        shutil.rmtree(root)
        root = one("rebuild (packages cached)", spec, cache)
        start = time.monotonic()
        again = make.make_root(spec, cache)
        print(f"{'reuse (root cached)':<34} total {time.monotonic() - start:7.3f} s", flush=True)
        assert again == root
        start = time.monotonic()
        run_in_root(root, ["true"])
        print(f"{'run_in_root(root, [true])':<34} total {time.monotonic() - start:7.3f} s")
        du = subprocess.run(["du", "-sh", str(root)], capture_output=True, text=True).stdout.split()[0]
        print(f"du -sh {root}: {du}")
    finally:
        if args.keep is None:
            shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
