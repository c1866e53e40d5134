"""One release path for both recipes: the sample, like AMD's real tree, releases in a container of its build root
(podman runs the root's folder itself; docker its image, `root image`), not from a Containerfile whose base image
nothing here can reach. The settings are checked for every recipe; the sample's smallest entry is released for real
in a podman container of that root without network (the sample builds in seconds)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.release_image import toolkit_cli
from tests.support.tools import ROOT
from toolkit.cli.release import load_settings
from toolkit.recipe.load import find_recipe, recipes_dir

ENTRY = "cp311-rdna"


def test_every_recipe_with_a_release_runs_it_in_a_build_root():
    roots = {path.stem for path in (ROOT / "containers" / "roots").glob("*.toml")}
    released = {}
    for path in sorted(recipes_dir(ROOT).glob("*.toml")):
        if path.name.endswith(".lock.toml") or "[release" not in path.read_text(encoding="utf-8"):
            continue
        container = load_settings(path).container
        released[path.stem] = container.root
        assert container.root in roots, f"{path.name}: [release.container] root {container.root!r} is no build root"
        assert container.containerfile is None and container.image is None, path.name
        assert container.runner == "toolkit", path.name   # the root's toolkit venv runs it, not nox
    assert {"amdgpu-ep", "umbrella-ep-real"} <= set(released)
    # The never-built Containerfile is gone, and nothing names it.
    assert not (ROOT / "containers" / "manylinux_2_28-rocm.Containerfile").exists()
    this = Path(__file__).relative_to(ROOT)
    named = subprocess.run(["git", "grep", "-l", "manylinux_2_28-rocm", "--", ".", f":!{this}"],
                           cwd=ROOT, capture_output=True, text=True)
    assert named.stdout == ""


def test_the_sample_plans_its_release_in_a_container_of_its_root():
    proc = toolkit_cli("container", "--engine", "podman", "--dry-run", "release",
                       "--recipe", str(find_recipe("amdgpu-ep", ROOT)), "--only", ENTRY, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    root = load_settings(find_recipe("amdgpu-ep", ROOT)).container.root
    assert f"root: build root {root} (" in proc.stdout and "run by podman as the container's filesystem" in proc.stdout
    # The root's folder under an overlay the engine discards, with its venv first on PATH.
    argv = proc.stdout.rstrip().splitlines()[-1]
    assert re.search(rf" --rootfs -- \S*/roots/{root}-[0-9a-f]{{16}}:O python3 -m toolkit release ", argv), argv
    assert "--env PATH=" in argv and "/roots/venvs/" in argv and f"--env TOOLKIT_IN_IMAGE={root}" in argv
    assert argv.endswith(f"python3 -m toolkit release --recipe {find_recipe('amdgpu-ep', ROOT)} --only {ENTRY}")


def test_the_sample_releases_in_a_container_of_its_root(sid_root, tmp_path):
    proc = toolkit_cli("container", "--network", "none", "--build-dir", str(tmp_path), "release",
                       "--recipe", "amdgpu-ep", "--only", ENTRY, "--offline", timeout=1800)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    dist = tmp_path / "amdgpu-ep" / "dist"
    checked = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=dist, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    wheels = [p.name for p in dist.glob("*.whl")]
    assert len(wheels) == 1 and wheels[0].startswith("onnxruntime_ep_amdgpu_sample-0.1.0+rdna-py3-none-manylinux_")
    assert (dist / (wheels[0] + ".cdx.json")).is_file() and (dist / "provenance.json").is_file()
