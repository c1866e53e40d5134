"""The umbrella dlopens its backend by bare name: repair gives it RUNPATH $ORIGIN as the recipe asks, checks the
sibling resolves inside the wheel, keeps ROCm and MIGraphX external, and the installed wheel loads it in a fresh
venv. Stand-ins built with gcc carry the real sonames (libmigraphx_c.so.3, libamdhip64.so.6)."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.support.wheel_support import EP_SOURCE, build_c_library, repair_bundling, shared_library
from toolkit.binary.elf import read_elf
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.release import sbom
from toolkit.util import tomlclass
from toolkit.util.errors import RecipeError, ToolkitError
from toolkit.util.fsutil import sha256_file
from toolkit.util.tomlread import load_toml
from toolkit.wheel.build import build_wheel

INFO = {"source_revision": "0123abc", "patches": [], "features": [], "rocm_version": None, "gpu_targets": []}
ROCM = ["libmigraphx_c.so.3", "libamdhip64.so.6", "librocm-core.so.1", "libamdhip64.so"]

UMBRELLA = EP_SOURCE + r"""
#include <dlfcn.h>
#include <stdio.h>
/* What AMD's umbrella does: the backend by bare name, found through the umbrella's own search path. */
int load_backend(void) {
  void* handle = dlopen("libmigraphx-backend.so", RTLD_NOW | RTLD_LOCAL);
  if (!handle) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  return 0;
}
"""


def settings(runpath: tuple[str, ...]) -> WheelSettings:
    return WheelSettings(version="0.1.0", components=(
        Component("amdgpu-ep", "AMDGPUExecutionProvider", runpath=runpath, loads=("migraphx-backend", "hip-backend")),
        Component("migraphx-backend"),
        Component("hip-backend", feature="hipdnn"),
    ))


def built_libraries(tmp_path: Path) -> tuple[Path, Path]:
    rocm = tmp_path / "rocm-install"  # stands for the ROCm install of the machine that runs the wheel
    for soname in ROCM:
        shared_library(rocm, soname)
    shared_library(rocm, "libplainhelper.so.2")  # not ROCm: grafted, so auditwheel rewrites the search path
    lib = tmp_path / "lib"
    lib.mkdir()
    source = tmp_path / "umbrella.c"
    source.write_text(UMBRELLA)
    (tmp_path / "umbrella.map").write_text(
        "{ global: CreateEpFactories; ReleaseEpFactory; load_backend; local: *; };\n")
    done = subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,--version-script={tmp_path / 'umbrella.map'}",
                           "-o", str(lib / "libamdgpu-ep.so"), str(source), f"-L{rocm}", "-Wl,--no-as-needed",
                           "-l:libplainhelper.so.2", "-ldl"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    build_c_library(lib / "libmigraphx-backend.so", [f"-L{rocm}"], [f"-l:{n}" for n in ROCM])
    return lib, rocm


def test_bare_name_backend_loads_from_the_installed_wheel_and_rocm_stays_external(tmp_path, monkeypatch):
    lib, rocm = built_libraries(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(rocm))
    wheel = build_wheel(settings(("$ORIGIN",)), lib, INFO, tmp_path / "out")
    result = repair_bundling(wheel, tmp_path / "repaired", components=settings(("$ORIGIN",)).components)

    with zipfile.ZipFile(result.wheel) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "unpacked")
    assert not [n for n in names for r in ROCM if r.split(".so")[0] + "." in n or r.split(".so")[0] + "-" in n]
    assert [n for n in names if "libplainhelper-" in n]
    umbrella = read_elf(tmp_path / "unpacked/onnxruntime_ep_amdgpu/libamdgpu-ep.so")
    assert (umbrella.runpath or umbrella.rpath) == ("$ORIGIN", "$ORIGIN/../onnxruntime_ep_amdgpu.libs")
    assert result.excluded == tuple(sorted(ROCM))
    again = repair_bundling(wheel, tmp_path / "again", components=settings(("$ORIGIN",)).components)
    assert sha256_file(again.wheel) == sha256_file(result.wheel)  # setting the RUNPATH keeps repairs reproducible

    # The SBOM names what the ROCm install must provide as external components.
    document = sbom.wheel_sbom(result.wheel)
    assert set(sbom.external_libraries(document, "rocm")) == set(ROCM)
    assert "libplainhelper.so.2" not in sbom.external_libraries(document)

    # Installed into a fresh venv, the umbrella finds its backend inside the wheel by bare name; the backend's
    # ROCm needs come from the ROCm install (here the stand-ins, on LD_LIBRARY_PATH as ld.so.conf would have them).
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(env_dir / "bin/python"), "install",
                          "--no-index", "--no-deps", "-q", str(result.wheel)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
    probe = (
        "import ctypes, pathlib, onnxruntime_ep_amdgpu as p\n"
        "umbrella = ctypes.CDLL(p.get_library_path())\n"
        "print('load_backend', umbrella.load_backend())\n"
        "print('\\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if '.so' in l})))\n"
    )
    done = subprocess.run([str(env_dir / "bin/python"), "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                          env={"LD_LIBRARY_PATH": str(rocm), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "load_backend 0" in done.stdout, done.stdout + done.stderr
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    assert f"{site}/onnxruntime_ep_amdgpu/libmigraphx-backend.so" in done.stdout.splitlines()
    assert f"{rocm}/libmigraphx_c.so.3" in done.stdout.splitlines()


def test_a_bare_name_sibling_that_would_not_resolve_fails_the_repair_naming_the_library(tmp_path, monkeypatch):
    lib, rocm = built_libraries(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(rocm))
    wheel = build_wheel(settings(()), lib, INFO, tmp_path / "out")
    with pytest.raises(ToolkitError) as err:
        repair_bundling(wheel, tmp_path / "repaired", components=settings(()).components)
    assert ('onnxruntime_ep_amdgpu/libamdgpu-ep.so: dlopen("libmigraphx-backend.so") would not find '
            "onnxruntime_ep_amdgpu/libmigraphx-backend.so") in str(err.value)
    assert "give component 'amdgpu-ep' runpath = \"$ORIGIN\"" in str(err.value)
    assert not list((tmp_path / "repaired").glob("*.whl"))


def test_runpath_and_loads_are_read_from_the_recipe_and_checked(tmp_path):
    def read(extra: str):
        path = tmp_path / "r.toml"
        path.write_text('[wheel]\nversion = "0.1.0"\n[[wheel.components]]\nlibrary = "amdgpu-ep"\n'
                        f'ep_name = "AMDGPUExecutionProvider"\n{extra}\n'
                        '[[wheel.components]]\nlibrary = "migraphx-backend"\n')
        return tomlclass.read(WheelSettings, load_toml(path).table("wheel"))

    umbrella = read('runpath = "$ORIGIN"\nloads = ["migraphx-backend"]').components[0]
    assert umbrella.runpath == ("$ORIGIN",) and umbrella.loads == ("migraphx-backend",)
    with pytest.raises(RecipeError,
                       match=r"key 'wheel.components\[0\].runpath': entry '/opt/rocm/lib' is not \$ORIGIN"):
        read('runpath = "$ORIGIN:/opt/rocm/lib"')
    with pytest.raises(RecipeError, match=r"'hip-backend' is not the library of a component of this wheel"):
        read('loads = ["hip-backend"]')
