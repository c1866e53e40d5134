"""The [release] section and the matrix: strict reading, entry ids, --print-matrix JSON, --only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.recipe.release import ReleaseSettings
from toolkit.release import checksums
from toolkit.release.matrix import matrix_json, plan_matrix, select
from toolkit.util.errors import RecipeError, ToolkitError
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml

FULL = """\
[recipe]
name = "amdgpu-ep"

[release]
python = ["3.11", "3.12"]
features = [[], ["hipdnn"]]
compile_cache = "redis://cache.internal:6379"

[[release.target_set]]
targets = ["gfx90a", "gfx942"]

[[release.target_set]]
name = "rdna"
targets = ["gfx1100", "gfx1201"]

[release.container]
image = "localhost/ort-amdgpu-release:1"
containerfile = "../containers/release.Containerfile"
runner = "nox"
"""


def _settings(tmp_path: Path, text: str):
    recipe = tmp_path / "recipes" / "r.toml"
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(text)
    return read(ReleaseSettings, load_toml(recipe).table("release"))


def test_full_section_reads_into_typed_settings(tmp_path):
    s = _settings(tmp_path, FULL)
    assert s.python == ("3.11", "3.12")
    assert [(t.name, t.targets) for t in s.target_sets] == [
        ("gfx90a_gfx942", ("gfx90a", "gfx942")), ("rdna", ("gfx1100", "gfx1201"))]
    assert s.features == ((), ("hipdnn",))
    assert s.compile_cache == "redis://cache.internal:6379"
    assert s.container.containerfile == (tmp_path / "containers/release.Containerfile").resolve()
    assert s.container.runner == "nox"


def test_matrix_is_the_product_with_stable_ids(tmp_path):
    entries = plan_matrix(_settings(tmp_path, FULL))
    assert [e.id for e in entries] == [
        "cp311-gfx90a_gfx942", "cp311-gfx90a_gfx942-hipdnn", "cp311-rdna", "cp311-rdna-hipdnn",
        "cp312-gfx90a_gfx942", "cp312-gfx90a_gfx942-hipdnn", "cp312-rdna", "cp312-rdna-hipdnn"]
    assert entries[3].gpu_targets == ("gfx1100", "gfx1201") and entries[3].features == ("hipdnn",)
    assert [e.id for e in select(entries, ["cp312-rdna", "cp311-rdna"])] == ["cp311-rdna", "cp312-rdna"]


def test_only_unknown_entry_lists_the_known_ones(tmp_path):
    entries = plan_matrix(_settings(tmp_path, FULL))
    with pytest.raises(ToolkitError, match="--only cp310-rdna: no such matrix entry") as info:
        select(entries, ["cp310-rdna"])
    assert "cp311-rdna-hipdnn" in str(info.value)


@pytest.mark.parametrize("body, key, message", [
    ('python = ["3.11", "3.11"]', "release.python", "duplicate value '3.11'"),
    ('python = ["311"]', "release.python[0]", "expected a CPython version"),
    ('python = []', "release.python", "at least one Python version"),
    ('features = [["hipdnn"], "x"]', "release.features[1]", "expected an array of feature names"),
    ('features = [["HipDNN"]]', "release.features[0]", "must be lower-case"),
    ('features = [[], []]', "release.features", "duplicate feature set ''"),
    ('[[release.target_set]]\ntargets = ["sm_90"]', "release.target_set[0].targets[0]",
     "expected a GPU target like"),
    ('[[release.target_set]]\ntargets = ["gfx90a"]\n[[release.target_set]]\ntargets = ["gfx90a"]',
     "release.target_set", "duplicate target set name 'gfx90a'"),
    ('pyhton = ["3.12"]', "release.pyhton", "unknown key"),
    ('[release.container]\nrunner = "make"', "release.container.runner", "expected one of 'nox', 'toolkit'"),
])
def test_bad_release_section_names_file_and_key(tmp_path, body, key, message):
    with pytest.raises(RecipeError) as info:
        _settings(tmp_path, "[release]\n" + body + "\n")
    text = str(info.value)
    assert f"r.toml: key '{key}'" in text
    assert message in text


def test_print_matrix_cli_prints_one_json_entry_per_build(tmp_path):
    recipe = tmp_path / "recipes" / "amdgpu-ep.toml"   # a recipe's name is its file's stem
    recipe.parent.mkdir()
    recipe.write_text(FULL)
    proc = subprocess.run([sys.executable, "-m", "toolkit", "release", "--recipe", str(recipe), "--print-matrix"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    ids = [e["id"] for e in data["include"]]
    assert len(ids) == 8 == len(set(ids))
    first = data["include"][0]
    assert first == {"id": "cp311-gfx90a_gfx942", "python": "3.11", "python_tag": "cp311",
                     "target_set": "gfx90a_gfx942", "gpu_targets": ["gfx90a", "gfx942"],
                     "gpu_targets_cmake": "gfx90a;gfx942", "features": [], "args": ["--only", "cp311-gfx90a_gfx942"],
                     "public": False}
    assert proc.stdout == matrix_json(plan_matrix(_settings(tmp_path, FULL)))

    only = subprocess.run([sys.executable, "-m", "toolkit", "release", "--recipe", str(recipe), "--print-matrix",
                           "--only", "cp312-rdna-hipdnn"], cwd=ROOT, capture_output=True, text=True)
    assert [e["id"] for e in json.loads(only.stdout)["include"]] == ["cp312-rdna-hipdnn"]

    bad = subprocess.run([sys.executable, "-m", "toolkit", "release", "--recipe", str(recipe), "--only", "nope"],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "--only nope: no such matrix entry" in bad.stderr


def test_dry_run_shows_plan_and_redacted_cache(tmp_path):
    recipe = tmp_path / "amdgpu-ep.toml"
    recipe.write_text(FULL)
    env = {"PATH": "/usr/bin:/bin", "TOOLKIT_COMPILE_CACHE": "redis://:pw@cache:6379"}
    proc = subprocess.run([sys.executable, "-m", "toolkit", "release", "--recipe", str(recipe), "--dry-run",
                           "--only", "cp311-rdna"], cwd=ROOT, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "compile cache: redis://:***@cache:6379 (from env TOOLKIT_COMPILE_CACHE)" in proc.stdout
    assert "entry cp311-rdna: python 3.11, targets gfx1100;gfx1201, features none" in proc.stdout
    assert ":pw@" not in proc.stdout


def test_checksums_verify_reports_changed_and_missing(tmp_path):
    (tmp_path / "a.whl").write_bytes(b"a")
    (tmp_path / "b.json").write_bytes(b"b")
    checksums.write(tmp_path, ["a.whl", "b.json"])
    assert checksums.verify(tmp_path) == []
    (tmp_path / "a.whl").write_bytes(b"changed")
    (tmp_path / "b.json").unlink()
    assert checksums.verify(tmp_path) == ["a.whl", "b.json"]
    with pytest.raises(ToolkitError, match="names must be plain file names"):
        checksums.write(tmp_path, ["sub/a.whl"])


def test_the_public_label_releases_one_build_per_variant_under_the_plain_version(tmp_path):
    """The real recipe's `public = ["glibc2.28", "win"]`: each ROCm variant's build without the hip backend, and the
    Windows build, carry 0.1.0, the others VERSION+LABEL; a label no entry has is refused, listing the labels there
    are. The Windows toolchain takes no ROCm axis (one entry, in the Windows root) and its own feature sets."""
    from toolkit.release.entry import entry_options

    recipe = ROOT / "recipes" / "umbrella-ep-real.toml"
    entries = plan_matrix(read(ReleaseSettings, load_toml(recipe).table("release")))
    assert {e.id: e.local_version for e in entries} == {
        "rocm6-glibc2.28": None, "rocm6-glibc2.28-hipdnn": "glibc2.28.hipdnn",
        "rocm7-glibc2.28": None, "rocm7-glibc2.28-hipdnn": "glibc2.28.hipdnn", "win": None}
    windows = next(e for e in entries if e.id == "win")
    assert (windows.rocm, windows.features, windows.root) == (None, (), "debian-sid-windows")
    assert entry_options(recipe, entries[0]).local_version is None
    assert entry_options(recipe, entries[1]).local_version == "glibc2.28.hipdnn"
    text = recipe.read_text().replace('public = ["glibc2.28", "win"]', 'public = ["glibc2.17", "win"]')
    wrong = tmp_path / "umbrella-ep-real.toml"
    wrong.write_text(text)
    with pytest.raises(ToolkitError, match=r"\[release\] public = 'glibc2.17': no matrix entry has that label") as err:
        plan_matrix(read(ReleaseSettings, load_toml(wrong).table("release")))
    assert err.value.hint == "the entries' labels: glibc2.28, glibc2.28.hipdnn, win"


WINDOWS = """\
[recipe]
name = "amdgpu-ep"

[release]
axes = ["toolchain", "features"]
features = [[]]

[[release.toolchain]]
name = "linux"
toolchain = "system"

[[release.toolchain]]
name = "win"
toolchain = "mingw"
root = "debian-sid-windows"
"""


def test_a_toolchain_set_with_a_root_is_built_in_that_roots_container(tmp_path):
    # The Windows toolchain's compilers and Wine are in their own root, as ROCm 7's are: its entries say so, and a
    # release on the host runs them there (toolkit/release/in_root.py).
    from toolkit.release.in_root import root_for, roots_of

    entries = plan_matrix(_settings(tmp_path, WINDOWS))
    assert [(e.id, e.root) for e in entries] == [("linux", None), ("win", "debian-sid-windows")]
    assert [e.get("root") for e in json.loads(matrix_json(entries))["include"]] == [None, "debian-sid-windows"]
    assert roots_of(entries) == ["debian-sid-windows"]
    assert root_for(entries[1]) == "debian-sid-windows" and root_for(entries[0]) is None


def test_a_toolchain_sets_root_must_be_a_package_set(tmp_path):
    with pytest.raises(RecipeError, match=r"key 'release.toolchain\[1\].root'.*no-such-root"):
        _settings(tmp_path, WINDOWS.replace('"debian-sid-windows"', '"no-such-root"'))
