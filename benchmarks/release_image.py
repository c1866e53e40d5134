"""How long a local build image takes: the root filesystem (debootstrap vs. the host's python3) and the
podman build FROM scratch on top of it. Prints the machine and the seconds of each step.

    python benchmarks/release_image.py               # host-python rootfs only (no network)
    python benchmarks/release_image.py --debootstrap # also debootstrap bookworm minbase from Debian's mirror
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

from toolkit.container import engine as container  # noqa: E402
from toolkit.container import local_rootfs  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def timed(label: str, fn) -> float:
    start = time.monotonic()
    fn()
    seconds = time.monotonic() - start
    print(f"{label:<48} {seconds:7.1f} s", flush=True)
    return seconds


def du(path: Path) -> str:
    return subprocess.run(["du", "-sh", str(path)], capture_output=True, text=True).stdout.split()[0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--debootstrap", action="store_true")
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, python {platform.python_version()}")
    work = Path(tempfile.mkdtemp(prefix="release-image-bench-"))
    try:
        env = {**os.environ, **container.sandbox_config(work / "engine")}
        engine = container.detect_engine("podman")
        kinds = ["host-python"] + (["debootstrap"] if args.debootstrap else [])
        for kind in kinds:
            context = work / kind
            make = (lambda c=context: local_rootfs.from_host_python(c / "rootfs")) if kind == "host-python" else \
                (lambda c=context: local_rootfs.debootstrap(c / "rootfs"))
            timed(f"{kind}: root filesystem", make)
            print(f"{kind}: size {du(context / 'rootfs')}")
            argv = container.build_argv(engine, REPO / "containers/local-rootfs.Containerfile", context,
                                        f"localhost/bench-{kind}:1")
            timed(f"{kind}: podman build (vfs)", lambda a=argv: subprocess.run(a, env=env, check=True,
                                                                          capture_output=True))
            run = container.run_argv(engine, f"localhost/bench-{kind}:1", ["python3", "-c", "pass"],
                                     container.Mounts(project=REPO), {})
            timed(f"{kind}: podman run python3 -c pass", lambda r=run: subprocess.run(r, env=env, check=True))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
