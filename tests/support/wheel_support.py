"""Helpers for the wheel-stage tests: real small libraries from C (plugin-EP-shaped ones, and any soname),
the wheel settings of the bundled sample, its build facts, and auditwheel's own view of a wheel's tag."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.sample_tree import SAMPLE_SERIES
from tests.support.tools import need, require_tool
from toolkit.patching import load_series
from toolkit.recipe.smoke import SmokeSettings
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.wheel.licenses import LicenseSource
from toolkit.wheel.repair import RepairResult, repair_wheel

EP_SOURCE = r"""
#include <stddef.h>
void* CreateEpFactories(const char* name, const void* api, const void* logger, void** factories,
                        size_t max_factories, size_t* num_factories) {
  (void)name; (void)api; (void)logger; (void)factories; (void)max_factories;
  *num_factories = 0;
  return NULL;
}
void* ReleaseEpFactory(void* factory) { (void)factory; return NULL; }
"""
VERSION_SCRIPT = "{ global: CreateEpFactories; ReleaseEpFactory; local: *; };\n"

SETTINGS = WheelSettings(
    version="0.1.0",
    components=(
        Component("amdgpu-ep", "AMDGPUExecutionProvider"),
        Component("migraphx-backend"),
        Component("hipdnn-backend", feature="hipdnn"),
    ),
    onnxruntime=">=1.24",
)

SMOKE = SmokeSettings(
    packages=("onnxruntime-ep-webgpu",),
    env={"AMDGPU_MIGRAPHX_EP_LIBRARY": "{library:onnxruntime_ep_webgpu}", "AMDGPU_EP_VERBOSE": "1"},
    expect_log=(
        r"^\[amdgpu-ep\] forwarded [1-9]\d* factor(y|ies) from .*/libmigraphx-backend\.so$",
        r"^\[migraphx-backend\] forwarded [1-9]\d* factor(y|ies) from .*/libonnxruntime_providers_webgpu\.so$",
        r"^\[amdgpu-ep\] released a factory of .*/libmigraphx-backend\.so",
    ),
)


def build_c_library(out: Path, extra_flags: list[str] = (), libs: list[str] = ()) -> Path:
    """A real plugin-EP-shaped shared library: two exported functions, a version script."""
    require_tool(shutil.which("gcc") is not None, "gcc is needed to build test libraries (apt-get install gcc)")
    work = out.parent / f".{out.name}.src"
    work.mkdir(parents=True, exist_ok=True)
    (work / "ep.c").write_text(EP_SOURCE)
    (work / "exports.map").write_text(VERSION_SCRIPT)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["gcc", "-shared", "-fPIC", "-O2", f"-Wl,--version-script={work / 'exports.map'}", *extra_flags,
           "-o", str(out), str(work / "ep.c"), "-Wl,--no-as-needed", *libs]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)}:\n{done.stderr}"
    return out


def stand_in_lib_dir(folder: Path, hipdnn: bool = False, umbrella_flags: list[str] = (), umbrella_libs=()) -> Path:
    build_c_library(folder / "libamdgpu-ep.so", umbrella_flags, umbrella_libs)
    build_c_library(folder / "libmigraphx-backend.so")
    if hipdnn:
        build_c_library(folder / "libhipdnn-backend.so")
    return folder


def sample_build_info(hipdnn: bool) -> dict:
    """The build facts a wheel of the sample records: its patch series as the toolkit reads it."""
    patches = [entry.name for entry in load_series(SAMPLE_SERIES).entries]
    return {"source_revision": "sample", "patches": patches, "features": {"hipdnn": hipdnn},
            "rocm_version": None, "gpu_targets": []}


def shared_library(folder: Path, soname: str, needs: list[str] = (), file: str | None = None) -> Path:
    """A real shared library with the given soname, linked against `needs` (sonames of files in `folder`)."""
    need("gcc")
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f".{soname}.c"
    symbol = "f_" + "".join(c if c.isalnum() else "_" for c in soname)
    source.write_text(f"int {symbol}(void) {{ return 7; }}\n")
    out = folder / (file or soname)
    cmd = ["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(out), str(source),
           "-Wl,--no-as-needed", f"-L{folder}", *[f"-l:{n}" for n in needs]]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)}:\n{done.stderr}"
    return out


def stand_in_licenses(folder: Path) -> LicenseSource:
    """A license table naming the made-up libraries tests bundle (any lib*), and a system root holding their text:
    repair's license step as it runs against a build root, without one."""
    text = folder / "license-root" / "usr/share/doc/libstandin/copyright"
    text.parent.mkdir(parents=True, exist_ok=True)
    text.write_text("Files: *\nCopyright: nobody (a library made up by a test)\nLicense: MIT\n")
    table = folder / "licenses.json"
    table.write_text(json.dumps({"bundled": [
        {"soname": "lib*", "name": "a test's stand-in", "license": "MIT", "source": "https://example.org/standin",
         "texts": ["usr/share/doc/libstandin/copyright"], "common_licenses": []}]}))
    return LicenseSource(table, folder / "license-root")


def repair_bundling(wheel: Path, out_dir: Path, **kwargs) -> RepairResult:
    """repair_wheel for a wheel that bundles libraries a test made up: their licenses from stand_in_licenses."""
    return repair_wheel(wheel, out_dir, license_source=stand_in_licenses(Path(out_dir).parent / ".licenses"), **kwargs)


def stand_in(folder: Path, soname: str, version: str, symbol: str) -> Path:
    """A library named `soname` whose one symbol carries `version`: what links it needs that version."""
    need("gcc")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{symbol}.c").write_text(f"int {symbol}(void) {{ return 1; }}\n")
    (folder / f"{symbol}.map").write_text(f"{version} {{ global: {symbol}; local: *; }};\n")
    out = folder / soname
    subprocess.run(["gcc", "-shared", "-fPIC", "-nostdlib", f"-Wl,-soname,{soname}",
                    f"-Wl,--version-script={folder / f'{symbol}.map'}", "-o", str(out), str(folder / f"{symbol}.c")],
                   check=True)
    return out



def needs_newer_c_runtime(out: Path) -> Path:
    """A plugin-EP-shaped library needing GLIBC_2.99 and GLIBCXX_3.4.99, which stand-ins of libc.so.6 and
    libstdc++.so.6 define and no real one does yet: this machine's loader refuses it in its own words."""
    stubs = out.parent / f".{out.name}.stubs"
    stand_in(stubs, "libc.so.6", "GLIBC_2.99", "future_glibc")
    stand_in(stubs, "libstdc++.so.6", "GLIBCXX_3.4.99", "future_cxx")
    (stubs / "uses.c").write_text("int future_glibc(void); int future_cxx(void);\n"
                                  "int use_future(void) { return future_glibc() + future_cxx(); }\n")
    return build_c_library(out, ["-nostdlib", str(stubs / "uses.c")],
                           [str(stubs / "libc.so.6"), str(stubs / "libstdc++.so.6")])


def needs_glibc(out: Path, version: str, flags: list[str] = (), libs: list[str] = ()) -> Path:
    """A plugin-EP-shaped library whose one versioned need is GLIBC_<version>: it calls a symbol that a stand-in
    libc.so.6 defines at that version (a version script), so its .gnu.version_r names it, as a library built
    against that glibc would; `flags` and `libs`: more for the link (a soname, libraries it needs)."""
    stubs = out.parent / f".{out.name}.glibc"
    stand_in(stubs, "libc.so.6", f"GLIBC_{version}", "glibc_symbol")
    (stubs / "uses.c").write_text("int glibc_symbol(void);\nint use_glibc(void) { return glibc_symbol(); }\n")
    return build_c_library(out, ["-nostdlib", *flags, str(stubs / "uses.c")], [str(stubs / "libc.so.6"), *libs])


def auditwheel_sym_tag(wheel: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["sym_tag"]
