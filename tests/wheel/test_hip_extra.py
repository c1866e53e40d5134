"""The umbrella's -hipdnn wheels say what their hip backend loads: the rocm7 one offers the extra [hip], which installs
hip-ep's own wheel (recipes/hip-ep.toml's distribution), so one `pip install` gets both. Real wheels built with the
real recipes from stand-in libraries; the extra's command is taken from the built wheel's page and run by pip as
printed (pip's options from its environment: no index, the test's wheelhouse, a target folder); the umbrella's
self-check then finds libhipgpu.so in hip-ep's package folder beside its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.support.tools import ROOT
from tests.support.wheel_support import build_c_library, shared_library
from toolkit.recipe.load import load_recipe
from toolkit.recipe.wheel import WheelSettings
from toolkit.util.errors import RecipeError
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import Table
from toolkit.wheel.build import build_wheel
from toolkit.wheel.wheelfile import read_headers

INFO = {"source_revision": "0123abc", "patches": [], "rocm_version": "7.2.4", "gpu_targets": []}
HIPDNN = ["amdgpu", "migraphx", "hipdnn"]


def recipe_wheel(name: str) -> WheelSettings:
    wheel = load_recipe(ROOT / "recipes" / f"{name}.toml").wheel
    assert wheel is not None
    return wheel


def umbrella_wheel(work: Path, major: int, features: list[str], house: Path) -> Path:
    """The real recipe's wheel of these features, its libraries linking a HIP `major` stand-in."""
    shared_library(work / "rocm", f"libamdhip64.so.{major}")
    hip = [f"-L{work / 'rocm'}", f"-l:libamdhip64.so.{major}"]
    for name in ("amdgpu-ep", "migraphx-backend", *(["hip-backend"] if "hipdnn" in features else [])):
        build_c_library(work / "lib" / f"lib{name}.so", libs=hip)
    return build_wheel(recipe_wheel("umbrella-ep-real"), work / "lib", {**INFO, "features": features}, house)


@pytest.fixture(scope="module")
def house(tmp_path_factory) -> Path:
    """One wheelhouse: the rocm7 -hipdnn, rocm7 plain and rocm6 -hipdnn umbrella wheels, and hip-ep's (real runtime)."""
    work, house = tmp_path_factory.mktemp("extra"), tmp_path_factory.mktemp("wheelhouse")
    umbrella_wheel(work / "rocm7-hipdnn", 7, HIPDNN, house)
    umbrella_wheel(work / "rocm7", 7, ["amdgpu", "migraphx"], house)
    umbrella_wheel(work / "rocm6-hipdnn", 6, HIPDNN, house)
    settings = recipe_wheel("hip-ep")
    for c in settings.components_for(frozenset()):
        build_c_library(work / "hip-ep" / c.filename)
    build_wheel(settings, work / "hip-ep", {"source_revision": "x", "features": {"mock": False}}, house)
    return house


def metadata(house: Path, stem: str):
    [wheel] = house.glob(f"{stem}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        headers = read_headers(archive, "METADATA")
    assert headers is not None
    return headers


def test_the_rocm7_hipdnn_wheel_offers_hip_eps_wheel_as_its_extra_hip(house):
    hip_ep = recipe_wheel("hip-ep")
    headers = metadata(house, "onnxruntime_ep_amdgpu_rocm7_hipdnn")
    assert headers.get_all("Provides-Extra") == ["hip"]
    [line] = headers.get_all("Requires-Dist")
    requirement = Requirement(line)
    # hip-ep's own wheel, by the name and at the version its recipe builds.
    assert requirement.name == hip_ep.distribution == "onnxruntime-ep-hip"
    assert requirement.specifier.contains(hip_ep.version)
    assert requirement.marker is not None and requirement.marker.evaluate({"extra": "hip"})
    assert not requirement.marker.evaluate({"extra": ""})
    # The plain build has no hip backend, and rocm6's would put hip-ep's HIP 7 beside its HIP 6: no extra.
    for stem in ("onnxruntime_ep_amdgpu_rocm7-", "onnxruntime_ep_amdgpu_rocm6_hipdnn-"):
        headers = metadata(house, stem.rstrip("-"))
        assert headers.get_all("Provides-Extra") is None and headers.get_all("Requires-Dist") is None, stem


def pip_as_printed(command: str, house: Path, target: Path) -> subprocess.CompletedProcess[str]:
    """The page's command run by sh as printed, with this interpreter's pip first on PATH, and pip's options from its
    environment: no config files, no index, this wheelhouse, a target folder."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(house), "PIP_TARGET": str(target),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, timeout=300)


def test_the_pages_command_installs_both_and_the_umbrella_finds_the_hip_ep(house, tmp_path):
    page = str(metadata(house, "onnxruntime_ep_amdgpu_rocm7_hipdnn").get_payload())
    said = re.search(r"^- `(pip install [^`]+)` installs `onnxruntime-ep-hip>=0\.4\.0` with it: ROCm/hip-ep's HIP "
                     r"EP \(libhipgpu\.so", page, re.M)
    assert said and said.group(1) == "pip install 'onnxruntime-ep-amdgpu-rocm7-hipdnn[hip]'", page
    site = tmp_path / "site"
    done = pip_as_printed(said.group(1), house, site)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "onnxruntime_ep_amdgpu" / "libhip-backend.so").is_file()
    assert (site / "onnxruntime_ep_hip" / "libhipgpu.so").is_file()
    clean = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    check = subprocess.run([sys.executable, "-m", "onnxruntime_ep_amdgpu"], capture_output=True, text=True,
                           env={**clean, "PYTHONPATH": str(site)}, cwd=site, timeout=300)
    path = site / "onnxruntime_ep_hip" / "libhipgpu.so"
    found = f"  libhipgpu.so (loaded at run time by libhip-backend.so): found {path}"
    assert found in check.stdout and "from onnxruntime-ep-hip 0.4.0" in check.stdout, check.stdout + check.stderr


def test_without_the_extra_only_the_umbrella_is_installed(house, tmp_path):
    site = tmp_path / "site"
    done = pip_as_printed("pip install onnxruntime-ep-amdgpu-rocm7-hipdnn", house, site)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "onnxruntime_ep_amdgpu" / "libhip-backend.so").is_file()
    assert not (site / "onnxruntime_ep_hip").exists()


BASE = {"version": "0.1.0", "components": [{"library": "a", "ep_name": "A"}], "named_features": ["hipdnn"],
        "rocm_variants": {"rocm7": "libamdhip64.so.7"}}
EXTRA = {"name": "hip", "requires": ["onnxruntime-ep-hip>=0.4.0"], "summary": "the HIP EP", "feature": "hipdnn",
         "variants": ["rocm7"]}


@pytest.mark.parametrize(("change", "said"), [
    ({"name": "Hip EP"}, r"key 'wheel\.extras\[0\]\.name': 'Hip EP' is not an extra name such as 'hip'"),
    ({"requires": ["onnxruntime>=1.24"]}, r"key 'wheel\.extras\[0\]\.requires\[0\]': never onnxruntime: "),
    ({"requires": ["onnxruntime-ep-hip>=>0.4"]}, r"key 'wheel\.extras\[0\]\.requires\[0\]': "
                                                 r"'onnxruntime-ep-hip>=>0\.4' is not a requirement such as"),
    ({"requires": ["onnxruntime-ep-hip; python_version > '3'"]}, r"key 'wheel\.extras\[0\]\.requires\[0\]': .* a "
                                                                r"name and a version range only"),
    ({"requires": []}, r"key 'wheel\.extras\[0\]\.requires': expected at least one requirement"),
    ({"variants": ["rocm8"]}, r"key 'wheel\.extras\[0\]\.variants\[0\]': 'rocm8' is not a key of "
                              r"\[wheel\.rocm_variants\] \(rocm7\)"),
])
def test_a_wrong_extra_is_one_recipe_error_naming_its_key(change, said):
    table = Table({**BASE, "extras": [{**EXTRA, **change}]}, Path("r.toml"), "wheel")
    with pytest.raises(RecipeError, match=r"^r\.toml: " + said) as caught:
        read(WheelSettings, table)
    assert "\n" not in str(caught.value)


def test_an_extra_of_a_feature_that_does_not_name_its_wheel_is_an_error(tmp_path):
    real = ROOT / "recipes" / "umbrella-ep-real.toml"
    extra = 'feature = "{}"\nvariants = ["rocm7"]'
    text = real.read_text().replace(extra.format("hipdnn"), extra.format("migraphx"))
    (tmp_path / "shared").symlink_to(ROOT / "recipes" / "shared")
    (tmp_path / real.name).write_text(text.replace("../patches/", f"{ROOT}/patches/"))
    with pytest.raises(RecipeError) as caught:
        load_recipe(tmp_path / real.name)
    assert str(caught.value) == (f"{tmp_path / real.name}: key 'wheel.extras[0].feature': 'migraphx' is not one of "
                                 "[wheel] named_features (hipdnn): a wheel that offers the extra only with a feature "
                                 "on needs a name of its own")


def test_an_extra_belongs_to_the_wheels_of_its_feature_and_variant():
    settings = read(WheelSettings, Table({**BASE, "extras": [EXTRA]}, Path("r.toml"), "wheel"))
    linked = ("libamdhip64.so.7",)
    assert [e.name for e in settings.for_features({"hipdnn"}).for_linked(linked, "here").extras] == ["hip"]
    assert settings.for_features(set()).for_linked(linked, "here").extras == ()
