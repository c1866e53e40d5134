"""A build with a named feature ([wheel] named_features: `--with-hipdnn`) is a distribution of its own: its wheel
never has the plain build's file name, so both sit in one wheelhouse, and pip installs each by its name."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.selfcheck_support import load_template
from tests.support.tools import ROOT
from tests.support.wheel_support import build_c_library, shared_library
from toolkit.recipe.load import load_recipe
from toolkit.recipe.wheel import WheelSettings
from toolkit.util.errors import ToolkitError
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import Table
from toolkit.wheel.build import build_wheel

REAL = ROOT / "recipes" / "umbrella-ep-real.toml"
INFO = {"source_revision": "0123abc", "patches": [], "rocm_version": "7.2.4", "gpu_targets": []}


def real_settings() -> WheelSettings:
    wheel = load_recipe(REAL).wheel
    assert wheel is not None
    return wheel


def test_the_real_recipe_names_a_hipdnn_build_apart_from_the_plain_one():
    settings = real_settings()
    linked = ("libamdhip64.so.7", "libmigraphx_c.so.3")
    plain = settings.for_features({"amdgpu", "migraphx"}).for_linked(linked, "here")
    hipdnn = settings.for_features({"amdgpu", "migraphx", "hipdnn"}).for_linked(linked, "here")
    assert plain.distribution == "onnxruntime-ep-amdgpu-rocm7"
    assert hipdnn.distribution == "onnxruntime-ep-amdgpu-rocm7-hipdnn"
    assert hipdnn.base_distribution == plain.base_distribution == "onnxruntime-ep-amdgpu"   # the meta-package
    # The meta-package installs the plain build only: a hipdnn build installs by its own name on every ROCm.
    assert [plain.install_name(v) for v in ("rocm6", "rocm7")] == ["onnxruntime-ep-amdgpu-rocm6",
                                                                    "onnxruntime-ep-amdgpu"]
    assert [hipdnn.install_name(v) for v in ("rocm6", "rocm7")] == ["onnxruntime-ep-amdgpu-rocm6-hipdnn",
                                                                     "onnxruntime-ep-amdgpu-rocm7-hipdnn"]


def test_a_named_feature_the_recipe_lacks_is_an_error(tmp_path):
    text = REAL.read_text().replace('named_features = ["hipdnn"]', 'named_features = ["hipdnm"]')
    (tmp_path / "shared").symlink_to(ROOT / "recipes" / "shared")
    (tmp_path / REAL.name).write_text(text.replace("../patches/", f"{ROOT}/patches/"))
    with pytest.raises(ToolkitError, match=r"key 'wheel.named_features\[0\]': no feature named 'hipdnm'"):
        load_recipe(tmp_path / REAL.name)


def _lib_dir(folder: Path, hipdnn: bool) -> Path:
    """The real recipe's libraries, each a real library linking a HIP 7 stand-in (the rocm7 variant)."""
    shared_library(folder / "rocm", "libamdhip64.so.7")
    hip = [f"-L{folder / 'rocm'}", "-l:libamdhip64.so.7"]
    for name in ("amdgpu-ep", "migraphx-backend", *(["hip-backend"] if hipdnn else [])):
        build_c_library(folder / "lib" / f"lib{name}.so", libs=hip)
    return folder / "lib"


def test_both_builds_share_a_wheelhouse_and_pip_installs_each_by_its_name(tmp_path):
    settings, house = real_settings(), tmp_path / "wheelhouse"
    plain = build_wheel(settings, _lib_dir(tmp_path / "plain", False),
                        {**INFO, "features": ["amdgpu", "migraphx"]}, house)
    hipdnn = build_wheel(settings, _lib_dir(tmp_path / "hipdnn", True),
                         {**INFO, "features": ["amdgpu", "migraphx", "hipdnn"]}, house)
    assert plain.name == "onnxruntime_ep_amdgpu_rocm7-0.1.0-py3-none-linux_x86_64.whl"
    assert hipdnn.name == "onnxruntime_ep_amdgpu_rocm7_hipdnn-0.1.0-py3-none-linux_x86_64.whl"
    assert sorted(p.name for p in house.glob("*.whl")) == sorted([plain.name, hipdnn.name])
    for name, has_hip in (("onnxruntime-ep-amdgpu-rocm7", False), ("onnxruntime-ep-amdgpu-rocm7-hipdnn", True)):
        target = tmp_path / name
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--find-links",
                        str(house), "--target", str(target), name], check=True)
        assert (target / "onnxruntime_ep_amdgpu" / "libhip-backend.so").is_file() is has_hip
        info = json.loads((target / "onnxruntime_ep_amdgpu" / "_wheel_info.json").read_text())
        assert info["distribution"] == name
    # The hipdnn wheel's self-check and description name the -hipdnn builds, never the plain meta-package.
    choices = dict(load_template("advice").variant_choices(info))
    assert choices == {"rocm6": "pip install onnxruntime-ep-amdgpu-rocm6-hipdnn",
                       "rocm7": "pip install onnxruntime-ep-amdgpu-rocm7-hipdnn"}
    with zipfile.ZipFile(hipdnn) as archive:
        metadata = archive.read("onnxruntime_ep_amdgpu_rocm7_hipdnn-0.1.0.dist-info/METADATA").decode()
    assert "- ROCm with `libamdhip64.so.7`: `pip install onnxruntime-ep-amdgpu-rocm7-hipdnn`" in metadata


def test_settings_without_named_features_keep_their_name():
    table = Table({"version": "0.1.0", "components": [{"library": "a", "ep_name": "A"}]}, "r.toml", "wheel")
    settings = read(WheelSettings, table)
    assert settings.for_features({"hipdnn"}).distribution == "onnxruntime-ep-amdgpu"
