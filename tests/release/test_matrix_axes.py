"""Matrix axes: a host-only py3-none recipe (AMD's real umbrella) varies by toolchain and feature set only."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.support.release_wheels import release_settings
from tests.support.tools import ROOT, run_toolkit
from toolkit.release.entry import entry_options
from toolkit.release.matrix import plan_matrix
from toolkit.util.errors import RecipeError

HOST_ONLY = """\
[release]
axes = ["toolchain", "features"]
features = [[], ["hipdnn"]]

[[release.toolchain]]
name = "glibc2.28"
toolchain = "zig"
glibc_floor = "2.28"

[[release.toolchain]]
toolchain = "system"

[release.container]
root = "debian-sid-rocm"
"""


def test_host_only_matrix_is_toolchains_times_features(tmp_path):
    settings = release_settings(tmp_path, HOST_ONLY)
    entries = plan_matrix(settings)
    assert [e.id for e in entries] == ["glibc2.28", "glibc2.28-hipdnn", "system", "system-hipdnn"]
    assert all(e.python is None and e.target_set is None and e.gpu_targets == () for e in entries)
    assert settings.container.root == "debian-sid-rocm"
    options = entry_options(Path("r.toml"), entries[1], overrides={"offline": True, "mirrors": ("file:///m",)})
    assert (options.toolchain, options.glibc_floor, options.local_version) == ("zig", "2.28", "glibc2.28.hipdnn")
    assert options.offline and options.mirrors == ("file:///m",) and options.variant == "release-glibc2.28-hipdnn"


@pytest.mark.parametrize("body, key, message", [
    ('axes = ["features", "gpu"]', "release.axes[1]", "unknown matrix axis 'gpu'"),
    ('axes = ["toolchain"]', "release.axes", "the features axis is always there"),
    ('axes = ["features"]\npython = ["3.12"]', "release.python", "not one of the matrix's axes"),
    ('axes = ["toolchain", "features"]', "release.toolchain", "needs at least one [[release.toolchain]]"),
    ('axes = ["toolchain", "features"]\n[[release.toolchain]]\ntoolchain = "zig"\nglibc_floor = "2.x"',
     "release.toolchain[0].glibc_floor", "expected a glibc version"),
    ('axes = ["toolchain", "features"]\n[[release.toolchain]]\ntoolchain = "zig"\nglibc_floor = "2.10"',
     "release.toolchain[0].glibc_floor", "with N >= 17"),
    ('axes = ["toolchain", "features"]\n[[release.toolchain]]\ntoolchain = "system"\nglibc_floor = "2.28"',
     "release.toolchain[0].glibc_floor", "only the zig toolchain builds for a glibc floor"),
    ('[release.container]\nroot = "x"\nimage = "y"', "release.container.root", "either root"),
])
def test_bad_axes_name_the_key(tmp_path, body, key, message):
    with pytest.raises(RecipeError, match=re.escape(f"key '{key}'") + ".*" + re.escape(message)):
        release_settings(tmp_path, "[release]\n" + body + "\n")


def test_real_recipe_prints_its_matrix():
    matrix = json.loads(run_toolkit("release", "--recipe", "umbrella-ep-real", "--print-matrix").stdout)
    # The Windows entry has no ROCm variant and no hipdnn build (the hip backend needs HIP): one entry, last.
    assert [(e["id"], e["python"], e["toolchain"], e.get("glibc_floor"), e["features"], e.get("rocm"), e["root"])
            for e in matrix["include"]] == [
        ("rocm6-glibc2.28", None, "zig", "2.28", [], "rocm6", "debian-sid-rocm"),
        ("rocm6-glibc2.28-hipdnn", None, "zig", "2.28", ["hipdnn"], "rocm6", "debian-sid-rocm"),
        ("rocm7-glibc2.28", None, "zig", "2.28", [], "rocm7", "debian-sid-rocm7"),
        ("rocm7-glibc2.28-hipdnn", None, "zig", "2.28", ["hipdnn"], "rocm7", "debian-sid-rocm7"),
        ("win", None, "mingw", None, [], None, "debian-sid-windows")]


def test_container_dry_run_mounts_the_build_folder_and_the_mirror(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    proc = run_toolkit("container", "--engine", "podman", "--image", "img:1", "--dry-run", "--build-dir",
                       str(tmp_path / "b"), "release", "--recipe", "umbrella-ep-real", "--only", "rocm6-glibc2.28",
                       "--mirror", mirror.as_uri(), "--offline")
    assert f"--volume {tmp_path / 'b'}:/work/build " in proc.stdout
    assert f"--volume {mirror}:{mirror}:ro " in proc.stdout
    assert "--env TOOLKIT_BUILD_DIR=/work/build" in proc.stdout and "--env SOURCE_DATE_EPOCH=" in proc.stdout
    assert proc.stdout.rstrip().endswith(f"release --recipe umbrella-ep-real --only rocm6-glibc2.28 --mirror "
                                         f"{mirror.as_uri()} --offline")
    assert ROOT.is_dir()


def test_container_recipe_reaches_the_session_with_what_it_extends(tmp_path):
    """`container --recipe`: the session inside gets the recipe by name, or by its path in the mounted project, so
    the files the recipe reaches (its `extends`, its series) are there too; a recipe elsewhere gets its folder."""
    args = ("container", "--engine", "podman", "--image", "img:1", "--dry-run")
    by_name = run_toolkit(*args, "--recipe", "umbrella-ep-real", "release", "--only", "rocm6-glibc2.28")
    assert by_name.stdout.rstrip().endswith("python3 -m toolkit release --recipe umbrella-ep-real --only "
                                            "rocm6-glibc2.28")
    assert "recipes/umbrella-ep-real.toml" not in by_name.stdout
    by_path = run_toolkit(*args, "--recipe", str(ROOT / "recipes" / "umbrella-ep-real.toml"), "release")
    assert by_path.stdout.rstrip().endswith("python3 -m toolkit release --recipe umbrella-ep-real")
    elsewhere = tmp_path / "mine" / "amdgpu-ep.toml"   # read whole: its name is its file's, its `extends` there
    (elsewhere.parent / "shared").mkdir(parents=True)
    elsewhere.write_text((ROOT / "recipes" / "amdgpu-ep.toml").read_text().replace(
        'path = "../samples/umbrella-ep"', 'path = "src"').replace('"../patches/amdgpu-ep/series"', '"series"'))
    (elsewhere.parent / "src").mkdir()
    (elsewhere.parent / "series").write_text("")
    shutil.copy(ROOT / "recipes" / "shared" / "umbrella-features.toml", elsewhere.parent / "shared")
    outside = run_toolkit(*args, "--recipe", str(elsewhere), "release")
    assert f"--volume {elsewhere.parent}:{elsewhere.parent}" in outside.stdout
    # the sample runs the toolkit in its root's image, as the real tree does
    assert outside.stdout.rstrip().endswith(f"python3 -m toolkit release --recipe {elsewhere}")
