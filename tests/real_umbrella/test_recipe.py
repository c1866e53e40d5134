"""The real tree's recipe on the host (no build root needed): shared features through `extends`, its patch
series against the pinned commit, and the error that names the recipe a --source tree belongs to."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.real_umbrella_support import MIRROR
from tests.support.tools import ROOT, need, require_tool
from toolkit import patching
from toolkit.recipe import features as feat
from toolkit.recipe.load import load_recipe
from toolkit.upstream import patches
from toolkit.util.errors import RecipeError

COMMIT = "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22"
ARCHIVE = MIRROR / f"github.com/onnxruntime/onnxruntime-ep-amdgpu/archive/{COMMIT}.tar.gz"


def _toolkit(*args: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(cache)}, timeout=300)


def test_sample_and_real_recipe_share_their_feature_tables():
    sample = load_recipe(ROOT / "recipes/amdgpu-ep.toml")
    real = load_recipe(ROOT / "recipes/umbrella-ep-real.toml")
    # The real tree's umbrella core and MIGraphX backend are Linux features here (AMD's HIP SDK for Windows is out
    # of reach); everything else is the shared file's.
    assert {n: f.platforms for n, f in real.features.items()} == {
        "amdgpu": ("linux",), "migraphx": ("linux",), "dml": ("windows",), "hipdnn": ("linux", "windows")}
    assert {n: replace(f, platforms=sample.features[n].platforms) for n, f in real.features.items()} == sample.features
    assert list(real.features) == ["amdgpu", "migraphx", "dml", "hipdnn"]
    assert [s.define for s in real.features["hipdnn"].spellings] == ["USE_HIPDNN", "USE_HIP", "USE_HIPEP"]
    assert [s.library for s in real.features["dml"].spellings] == ["directx-backend", "directml-backend"]
    # The real tree declares USE_HIP, so hipdnn becomes USE_HIP / hip-backend, and stays opt-in.
    chosen = feat.select_features(real, [], [])
    assert chosen == {"amdgpu": True, "migraphx": True, "dml": False, "hipdnn": False}
    resolved = feat.resolve_spellings(real, {**chosen, "hipdnn": True}, {"USE_AMDGPU", "USE_MIGRAPHX", "USE_HIP",
                                                                        "USE_DML"}, "tree")
    assert resolved["hipdnn"].spelling.define == "USE_HIP" and resolved["hipdnn"].spelling.library == "hip-backend"
    assert dict(feat.expected_libraries(real, resolved))["migraphx-backend"] == (
        "CreateEpFactories", "GetBackendTelemetry", "ReleaseEpFactory")


def _recipe(tmp_path: Path, recipe: str, shared: str | None = None) -> Path:
    (tmp_path / "shared").mkdir(exist_ok=True)
    if shared is not None:
        (tmp_path / "shared/f.toml").write_text(shared)
    path = tmp_path / "r.toml"
    path.write_text(recipe)
    return path


SHARED = '[features.a]\ndefine = "USE_A"\ndefault = true\n[features.b]\ndefine = "USE_B"\n'


def test_extends_merges_features_own_win_and_errors_name_the_file(tmp_path):
    head = '[recipe]\nname = "r"\nextends = "shared/f.toml"\n'
    r = load_recipe(_recipe(tmp_path, head + '[features.b]\ndefine = "USE_BB"\nimplies = ["a"]\n', SHARED))
    assert r.features["a"].spellings[0].define == "USE_A" and r.features["b"].spellings[0].define == "USE_BB"
    assert r.features["b"].implies == ("a",)

    with pytest.raises(RecipeError, match=r"r\.toml: key 'recipe\.extends': no such file .*missing\.toml"):
        load_recipe(_recipe(tmp_path, '[recipe]\nname = "r"\nextends = "missing.toml"\n'))
    with pytest.raises(RecipeError, match=r"shared/f\.toml: key 'features\.a\.default': expected a boolean"):
        load_recipe(_recipe(tmp_path, head, '[features.a]\ndefine = "USE_A"\ndefault = "yes"\n'))
    with pytest.raises(RecipeError,
                       match=r"shared/f\.toml: key 'source': a shared fragment .* holds only \[features\]"):
        load_recipe(_recipe(tmp_path, head, '[source]\npath = "."\n' + SHARED))
    with pytest.raises(RecipeError, match=r"r\.toml: key 'recipe\.extends': a recipe cannot extend itself"):
        load_recipe(_recipe(tmp_path, '[recipe]\nname = "r"\nextends = "r.toml"\n'))
    with pytest.raises(RecipeError, match=r"r\.toml: key 'features\.b\.implies\[0\]': no feature named 'zz'"):
        load_recipe(_recipe(tmp_path, head + '[features.b]\ndefine = "USE_B"\nimplies = ["zz"]\n', SHARED))


@pytest.fixture(scope="module")
def real_tree(tmp_path_factory) -> Path:
    require_tool(ARCHIVE.is_file(), f"the upstream mirror does not hold {ARCHIVE}")
    from toolkit.sources.extract import extract_archive

    return extract_archive(ARCHIVE, tmp_path_factory.mktemp("ep") / "onnxruntime-ep-amdgpu")


def test_source_tree_that_the_default_recipes_patches_do_not_fit_names_the_likely_recipe(real_tree, tmp_path):
    proc = _toolkit("build", "--source", str(real_tree), "--dry-run", "--build-dir", str(tmp_path / "b"),
                    cache=tmp_path / "cache")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    text = proc.stderr
    assert f"--source {real_tree}: the patch series of recipe amdgpu-ep" in text
    assert "the tree fits recipe umbrella-ep-real (its patch series applies)" in text
    assert "hint: pass --recipe umbrella-ep-real" in text and "Traceback" not in text
    assert not (tmp_path / "b").exists()


def test_patch_check_passes_on_the_pinned_commit_from_the_mirror(tmp_path):
    need("git")
    require_tool((MIRROR / "github.com/onnxruntime/onnxruntime-ep-amdgpu.git").is_dir(),
                 "the upstream mirror does not hold the umbrella EP's git repository")
    proc = _toolkit("patch", "--recipe", "umbrella-ep-real", "--mirror", MIRROR.as_uri(), "--offline",
                    "--with", "hipdnn", "--check", "--build-dir", str(tmp_path / "b"), cache=tmp_path / "cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("0001-probe-migraphx-apis.patch", "0002-runpath-for-bare-name-backends.patch",
                 "0003-missing-hip-backend-not-fatal.patch", "0004-no-device-is-zero-devices.patch",
                 "0005-guard-advance-backend-option.patch"):
        assert f"{name}: applies" in proc.stdout
    # 0006 guards the same call as older revisions write it: this one does not need it (if-tree-has).
    assert "patch 0006-guard-advance-backend-option-before-nchw.patch: not needed on this revision" in proc.stderr
    assert "5 of 5 patch(es) of phase base apply" in proc.stderr
    assert "offset" not in proc.stdout and "fuzz" not in proc.stdout  # refreshed for the pinned commit
    # Without the hip backend, its patch is not applied (when=hipdnn).
    proc = _toolkit("patch", "--recipe", "umbrella-ep-real", "--mirror", MIRROR.as_uri(), "--offline",
                    "--check", "--build-dir", str(tmp_path / "b"), cache=tmp_path / "cache")
    assert proc.returncode == 0
    assert "0003-missing-hip-backend-not-fatal.patch: not applied: needs when=hipdnn" in proc.stdout
    # Left out: 0003 (hipdnn), 0006 (this revision) and the Windows build's 0007-0013 (dml).
    assert "4 of 4 patch(es) of phase base apply" in proc.stderr and "; 8 left out by their conditions" in proc.stderr
    assert "offset" not in proc.stdout and "fuzz" not in proc.stdout
    # A bump to the pinned commit proposes nothing: each patch kept as it is, or not needed there.
    recipe = load_recipe(ROOT / "recipes" / "umbrella-ep-real.toml")
    series = patching.load_series(recipe.series)
    defaults = [name for name, on in feat.select_features(recipe, [], []).items() if on]
    planned = patches.plan(series, tmp_path / "b" / "umbrella-ep-real" / "release" / "upstream",
                           patches.series_features(series, defaults))
    assert {v.name: v.action for v in planned.verdicts} == {
        **{e.name: patches.KEEP for e in series.entries if "0006" not in e.name},
        "0006-guard-advance-backend-option-before-nchw.patch": patches.NOT_NEEDED}
