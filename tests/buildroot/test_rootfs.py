"""A build root's folder run by podman as the container's filesystem (toolkit/buildroot/rootfs.py): the command
line, what docker is told, a root the container cannot write, and prune seeing the root in use."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.tools import need
from toolkit.buildroot import image, prune
from toolkit.container import engine as container
from toolkit.container.rootfs import RootFS
from toolkit.util.errors import ToolkitError

PODMAN = container.Engine("podman", "/usr/bin/podman")


def _root(tmp_path: Path, venv_in_cache: bool) -> tuple[RootFS, container.Mounts]:
    cache = tmp_path / "cache"
    venv = (cache if venv_in_cache else tmp_path / "elsewhere") / "roots" / "venvs" / "0123456789abcdef"
    root = RootFS("debian-sid-rocm", tmp_path / "cache" / "roots" / "debian-sid-rocm-0123456789abcdef", venv)
    mounts = container.Mounts(project=tmp_path, cache=cache, cache_inside=str(cache.resolve()))
    return root, mounts


def test_podman_runs_the_roots_folder_under_an_overlay_with_the_images_environment(tmp_path):
    root, mounts = _root(tmp_path, venv_in_cache=True)
    argv = container.run_argv(PODMAN, root, ["python3", "-m", "toolkit", "release"], mounts, {"CI": "true"})
    assert argv[argv.index("--rootfs"):] == ["--rootfs", "--", f"{root.path}:O", "python3", "-m", "toolkit", "release"]
    assert f"PATH={root.venv}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" in argv
    assert "TOOLKIT_IN_IMAGE=debian-sid-rocm" in argv and "HOME=/root" in argv and "CI=true" in argv
    # The venv is seen through the cache's mount at its host path: no second mount of it.
    assert not any(str(root.venv) in a for a in argv if a.endswith(":ro"))


def test_a_venv_outside_the_mounted_cache_is_bound_read_only(tmp_path):
    root, mounts = _root(tmp_path, venv_in_cache=False)
    argv = container.run_argv(PODMAN, root, ["true"], mounts, {})
    assert f"{root.venv.resolve()}:{root.venv.resolve()}:ro" in argv


def test_docker_is_told_to_use_the_roots_image(tmp_path):
    root, mounts = _root(tmp_path, venv_in_cache=True)
    with pytest.raises(ToolkitError, match=r"^docker cannot run build root debian-sid-rocm .* without an image") as exc:
        container.run_argv(container.Engine("docker", "/usr/bin/docker"), root, ["true"], mounts, {})
    assert exc.value.hint == "make its image: `.nox/toolkit/bin/python -m toolkit root image debian-sid-rocm`"


def test_a_root_path_with_a_colon_is_refused_before_anything_runs(tmp_path):
    root = RootFS("r", tmp_path / "a:b", tmp_path / "venv")
    with pytest.raises(ToolkitError, match=r"the root's path holds ':'"):
        container.check_values(root, {})


def test_the_container_cannot_write_the_root(sid_root, tmp_path):
    need("podman", "podman runc")
    (tmp_path / "venv").mkdir()
    root = RootFS("debian-sid-rocm", sid_root, tmp_path / "venv")
    mounts = container.Mounts(project=tmp_path)
    argv = container.run_argv(PODMAN, root, ["sh", "-c", "touch /written-by-the-container && echo $TOOLKIT_IN_IMAGE"],
                              mounts, {}, network="none")
    proc = subprocess.run(argv, capture_output=True, text=True, env=image.engine_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "debian-sid-rocm"
    assert not (sid_root / "written-by-the-container").exists()


def test_prune_sees_a_root_that_podman_runs(tmp_path):
    root = tmp_path / "debian-sid-rocm-0123456789abcdef"
    root.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", f"{root}:O"])
    try:
        deadline = time.monotonic() + 10
        while not prune.users(root) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(f"pid {holder.pid} " in user for user in prune.users(root))
    finally:
        holder.kill()
        holder.wait()
