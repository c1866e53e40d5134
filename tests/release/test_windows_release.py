"""A release of the sample's Windows wheel: a [[release.toolchain]] set with toolchain mingw and the Windows root,
started on the host, built in a podman container of that root, twice, giving the same bytes.

The release recipe is the sample's with its [release] section replaced, written into the project's build folder:
a release mounts the project as the container's working directory, and the recipe's paths must resolve there."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from tests.support.release_image import toolkit_cli
from tests.support.tools import ROOT, need

RELEASE = '''[release]
axes = ["toolchain", "features"]
features = [[]]

[[release.toolchain]]
name = "win"
toolchain = "mingw"
root = "debian-sid-windows"

[release.container]
root = "debian-sid-windows"
runner = "toolkit"

'''


def windows_release_recipe() -> Path:
    """recipes/amdgpu-ep.toml with a Windows-only release matrix, in build/test-recipes/ (paths rewritten)."""
    text = (ROOT / "recipes" / "amdgpu-ep.toml").read_text()
    for relative in ("shared/umbrella-features.toml", "../samples/umbrella-ep", "../patches/amdgpu-ep/series"):
        moved = "../../recipes/" + relative if relative.startswith("shared/") else "../" + relative
        text = text.replace(f'"{relative}"', f'"{moved}"')
    text = text[:text.index("[release]")] + RELEASE + text[text.index("[wheel]"):]
    text = text.replace('name = "amdgpu-ep"\n', 'name = "amdgpu-ep-windows"\n', 1)
    recipe = ROOT / "build" / "test-recipes" / "amdgpu-ep-windows.toml"
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(text)
    return recipe


def test_the_windows_wheel_releases_in_its_roots_container_and_twice_gives_the_same_bytes(windows_root: Path,
                                                                                           tmp_path: Path) -> None:
    need("podman", "podman runc")
    recipe = windows_release_recipe()
    digests = []
    for run in ("first", "second"):
        out, build = tmp_path / run / "dist", tmp_path / run / "build"
        proc = toolkit_cli("release", "--recipe", str(recipe.relative_to(ROOT)), "--out", str(out),
                           "--build-dir", str(build), timeout=1800)
        said = proc.stdout + proc.stderr
        assert proc.returncode == 0, said[-6000:]
        assert "release: win: in a container of build root debian-sid-windows" in said
        files = sorted(p.name for p in out.iterdir())
        assert files == ["SHA256SUMS", "onnxruntime_ep_amdgpu_sample-0.1.0+win-py3-none-win_amd64.whl",
                         "onnxruntime_ep_amdgpu_sample-0.1.0+win-py3-none-win_amd64.whl.cdx.json", "provenance.json"]
        digests.append({name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in files})
        shutil.rmtree(build, ignore_errors=True)
    assert digests[0] == digests[1]
