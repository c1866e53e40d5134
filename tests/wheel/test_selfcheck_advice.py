"""What the self-check tells a user to do (toolkit/wheel/templates/advice.py, shipped as _advice.py), loaded from the
template and fed the facts `_selfcheck.py` gathers, for the pieces no machine here can show: a GPU the EP offers no
device on (the tree's own trace variable), /dev/kfd the user cannot open, two ONNX Runtime flavours or two EP
variants installed at once, a library a backend loads at run time missing beside a working EP. The wheel info comes
from the real recipes, as the wheel stage writes it."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.support.selfcheck_support import BOOKWORM, load_template
from tests.support.tools import ROOT
from toolkit.recipe.wheel import WheelSettings
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml
from toolkit.wheel.buildinfo import BuildInfo
from toolkit.wheel.project import wheel_info

AMD_NODE = {"node": "/dev/dri/renderD128", "vendor": "0x1002", "device": "0x74a1", "present": True}


@pytest.fixture(scope="module")
def advice():
    return load_template("advice")


def info_of(recipe: str, linked: tuple[str, ...] = ()) -> dict:
    """_wheel_info.json of a recipe's wheel whose libraries link `linked`, with every feature on."""
    path = ROOT / "recipes" / f"{recipe}.toml"
    settings = read(WheelSettings, load_toml(path).table("wheel")).for_linked(linked, recipe)
    build = BuildInfo.from_mapping({"source_revision": "x", "patches": [], "features": {"hipdnn": True},
                                    "rocm_version": None, "gpu_targets": [], "rocm_libraries": list(linked)})
    return wheel_info(settings.components_for(frozenset({"hipdnn"})), build, settings)


def facts(**changes) -> dict:
    """The facts of a machine where everything is in place and the EP offers one device, changed as asked."""
    base = {"ep_name": "AMDGPUExecutionProvider", "installed_as": ["onnxruntime-ep-amdgpu-rocm7"],
            "rocm_libraries": [], "runtime_libraries": [], "libraries": [],
            "gpus": {"kfd": True, "kfd_access": True, "render_nodes": [AMD_NODE], "amd": [AMD_NODE]},
            "onnxruntime": {"distribution": "onnxruntime-migraphx", "version": "1.27.1", "supported": ">=1.24",
                            "in_range": True, "distributions": ["onnxruntime-migraphx 1.27.1"]},
            "registration": {"attempted": True, "error": None, "devices": [{"type": "GPU"}], "log": []}}
    return {**base, **changes}


REAL7 = ("umbrella-ep-real", ("libamdhip64.so.7", "libmigraphx_c.so.3"))


def test_a_working_machine_needs_nothing(advice):
    assert advice.missing_pieces(facts(), info_of(*REAL7)) == []


@pytest.mark.parametrize("recipe, linked, variable", [(*REAL7, "ORT_AMDGPU_TRACE_ROUTING"),
                                                      ("amdgpu-ep", (), "AMDGPU_EP_VERBOSE")])
def test_a_gpu_without_devices_names_the_trees_own_trace_variable(advice, recipe, linked, variable):
    no_devices = {"attempted": True, "error": None, "devices": [], "log": []}
    [piece] = advice.missing_pieces(facts(registration=no_devices), info_of(recipe, linked))
    assert piece == {"what": "an AMD GPU is here but AMDGPUExecutionProvider offers zero devices",
                     "do": f"run with {variable}=1 to see what it does with the GPU", "blocking": True}


def test_a_kfd_the_user_cannot_open_says_which_groups(advice):
    gpus = {"kfd": True, "kfd_access": False, "render_nodes": [AMD_NODE], "amd": [AMD_NODE]}
    none = {"attempted": True, "error": None, "devices": [], "log": []}
    [piece] = advice.missing_pieces(facts(gpus=gpus, registration=none), info_of(*REAL7))
    assert "sudo usermod -aG render,video $USER" in piece["do"]


def test_two_onnxruntime_flavours_at_once_keep_one(advice):
    ort = {"distribution": "onnxruntime-migraphx", "version": "1.27.1", "supported": ">=1.24", "in_range": True,
           "distributions": ["onnxruntime-migraphx 1.27.1", "onnxruntime 1.32.0"]}
    [piece] = advice.missing_pieces(facts(onnxruntime=ort), info_of(*REAL7))
    assert piece["what"].startswith("2 ONNX Runtime distributions share the onnxruntime module")
    assert piece["do"].startswith("keep one: pip uninstall onnxruntime-migraphx onnxruntime, then "
                                  "pip install 'onnxruntime-migraphx>=1.24' (AMD's build")


def test_two_variants_at_once_keep_the_one_this_machine_needs(advice):
    both = ["onnxruntime-ep-amdgpu-rocm6", "onnxruntime-ep-amdgpu-rocm7"]
    [piece] = advice.missing_pieces(facts(installed_as=both), info_of(*REAL7))
    assert piece["what"] == ("2 distributions install the onnxruntime_ep_amdgpu package (onnxruntime-ep-amdgpu-rocm6, "
                             "onnxruntime-ep-amdgpu-rocm7): each overwrote the other's files")
    assert piece["do"] == ("keep one: pip uninstall onnxruntime-ep-amdgpu-rocm6 onnxruntime-ep-amdgpu-rocm7, then "
                           "install the one this machine needs (ROCm 6: pip install onnxruntime-ep-amdgpu-rocm6; "
                           "ROCm 7: pip install onnxruntime-ep-amdgpu)")


def test_the_hip_backends_ep_missing_beside_a_working_ep_is_listed_not_blocking(advice):
    info = info_of(*REAL7)
    assert info["components"][-1]["dlopens"] == ["libhipgpu.so"] and "libhipgpu.so" in info["install"]
    missing = [{"name": "libhipgpu.so", "needed_by": "libhip-backend.so", "found": False, "path": None,
                "how": "not found", "elsewhere": []}]
    [piece] = advice.missing_pieces(facts(runtime_libraries=missing), info)
    assert not piece["blocking"] and piece["what"] == "libhipgpu.so not found (loaded by libhip-backend.so at run time)"
    assert piece["do"].startswith("install the HIP EP, built from AMD's ROCm/hip-ep sources by this toolkit as the "
                                  "wheel onnxruntime-ep-hip (recipe hip-ep")


def test_a_registration_error_names_the_trace_variable(advice):
    failed = {"attempted": True, "error": "Fail: some ORT error", "devices": [], "log": []}
    [piece] = advice.missing_pieces(facts(registration=failed), info_of(*REAL7))
    assert piece["what"] == "registering AMDGPUExecutionProvider with onnxruntime fails: Fail: some ORT error"
    assert piece["do"] == "run with ORT_AMDGPU_TRACE_ROUTING=1 to see what the EP does"


def test_a_test_build_is_never_ready_and_says_why(advice):
    """hip-ep's mock runtime ([wheel] test_only): even where the EP offers a device, the verdict names the test
    build first; the same wheel built without the feature needs nothing."""
    path = ROOT / "recipes" / "hip-ep.toml"
    settings = read(WheelSettings, load_toml(path).table("wheel"))
    components = settings.components_for(frozenset())

    def info(features: dict) -> dict:
        build = BuildInfo.from_mapping({"source_revision": "x", "features": features})
        return wheel_info(components, build, settings)

    hip = facts(ep_name="hipgpu", installed_as=["onnxruntime-ep-hip"])
    [piece] = advice.missing_pieces(hip, info({"mock": True}))
    assert piece["blocking"] and piece["what"].startswith("this is a test build (feature mock: the mock runtime")
    # No index has a release of it: the verdict gives the command that builds the real runtime's wheel, which the
    # guide shows, and never points to a release.
    assert settings.real_build and "--without-mock" in settings.real_build.split()
    assert piece["do"] == (f"build the wheel without mock with the ort-amdgpu toolkit ({settings.real_build}) and "
                           "install that one")
    assert "release" not in piece["do"]
    guide = (ROOT / "docs" / "guides" / "building-hip-ep.md").read_text(encoding="utf-8")
    assert f"\n{settings.real_build}\n" in guide
    assert advice.missing_pieces(hip, info({"mock": False})) == []


SID = {"id": "debian", "version_id": None, "codename": "forky", "name": "Debian GNU/Linux forky/sid"}


@pytest.mark.parametrize("system, hip, migraphx", [
    (BOOKWORM, None, None),   # Debian 12 has neither package: the ROCm release and where it comes from
    (SID, "Debian's libamdhip64-7 from experimental (add experimental to apt's sources)", "Debian's libmigraphx-c3"),
    ({"id": "ubuntu", "version_id": "24.04", "codename": "noble", "name": "Ubuntu 24.04"}, None, None),
])
def test_a_debian_package_is_named_only_where_the_distribution_has_it(advice, system, hip, migraphx):
    missing = [{"soname": soname, "found": False, "loads": False, "path": None, "error": None, "elsewhere": [],
                "needed_by": ["libamdgpu-ep.so"]} for soname in REAL7[1]]
    pieces = advice.missing_pieces(facts(rocm_libraries=missing, system=system), info_of(*REAL7))
    hip_do, migraphx_do = pieces[0]["do"], pieces[1]["do"]
    assert hip_do.startswith("install ROCm 7's HIP runtime: " + (f"{hip}, or " if hip else "") +
                             "AMD's ROCm 7.x package hip-runtime-amd (in /opt/rocm-7.*/lib), from AMD's ROCm package "
                             "repository for this distribution, or put"), hip_do
    assert migraphx_do.startswith("install MIGraphX's C API: " + (f"{migraphx}, or " if migraphx else "") +
                                  "AMD's ROCm package migraphx"), migraphx_do
    if not hip:
        assert "Debian's" not in hip_do + migraphx_do


def test_the_debian_packages_named_are_in_the_build_roots_suites():
    """runtime_sources.json's debian_suites are what the build roots installed (their lock files): a sid package at
    a sid version, an experimental one at an experimental version (~exp)."""
    data = json.loads((ROOT / "toolkit" / "wheel" / "data" / "runtime_sources.json").read_text())
    locked: dict[str, str] = {}
    for lock in sorted((ROOT / "containers" / "roots").glob("*.lock")):
        locked.update(tomllib.loads(lock.read_text()).get("packages", {}))
    assert data["debian_suites"], data
    for package, suites in data["debian_suites"].items():
        assert package in locked, f"{package}: in no build root's lock file"
        assert ("experimental" in suites) == ("~exp" in locked[package]), (package, suites, locked[package])


def test_a_carried_dll_bound_to_another_copy_in_the_process_says_to_register_first(advice):
    """Windows: a DLL of the name the wheel carries, loaded into the process before the EP (another ORT's
    DirectML.dll), is the one Windows binds the EP to; the self-check names both files and the order that avoids
    it. (Under Wine the tests show the other two cases: the wheel's copy bound, and the copy deleted.)"""
    bound = {"dll": "DirectML.dll", "bound_to": r"C:\py\Lib\site-packages\onnxruntime\capi\DirectML.dll",
             "wheel_copy": r"C:\py\Lib\site-packages\onnxruntime_ep_amdgpu\DirectML.dll",
             "wheel_copy_present": True, "is_wheel_copy": False}
    libraries = [{"file": "directx-ep.dll", "ep_name": "AMDGPUExecutionProvider", "plugin": True, "loads": True,
                  "error": None, "runtime": None, "carried_imports": [bound]}]
    windows = {"id": "windows", "version_id": "10.0.26100", "name": "Windows 11 (10.0.26100)", "wine": None}
    [piece] = advice.missing_pieces(facts(libraries=libraries, system=windows), info_of("amdgpu-ep"))
    assert piece == {
        "what": r"directx-ep.dll is bound to C:\py\Lib\site-packages\onnxruntime\capi\DirectML.dll, not the "
                r"DirectML.dll the wheel carries (C:\py\Lib\site-packages\onnxruntime_ep_amdgpu\DirectML.dll): a "
                "DirectML.dll of that name was loaded into this process first, and Windows reuses it",
        "do": "register this EP before anything that loads another DirectML.dll (in a fresh process, `python -m "
              "onnxruntime_ep_amdgpu` shows the wheel's copy bound)", "blocking": True}
