"""Build, repair and inspect wheels of real small libraries built here with gcc."""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.tools import require_tool
from tests.support.wheel_support import SETTINGS, auditwheel_sym_tag, build_c_library, repair_bundling, stand_in_lib_dir
from toolkit.binary.offload_bundle import offload_report
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import sha256_file
from toolkit.wheel.build import build_wheel
from toolkit.wheel.inspection import inspect_wheel

INFO = {"source_revision": "0123abc", "patches": ["0001-rename-hipep-to-hipdnn.patch"], "features": [],
        "rocm_version": "7.2.0", "gpu_targets": ["gfx90a", "gfx1030"]}
ROCM_LIB = Path("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5")


def load_package(wheel: Path, dest: Path):
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(dest)
    spec = importlib.util.spec_from_file_location(f"pkg_{dest.name}", dest / "onnxruntime_ep_amdgpu" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wheel_holds_the_components_of_the_features_that_are_on(tmp_path):
    libs = stand_in_lib_dir(tmp_path / "lib", hipdnn=True)
    wheel = build_wheel(SETTINGS, libs, INFO, tmp_path / "out")
    assert wheel.name == "onnxruntime_ep_amdgpu-0.1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read("onnxruntime_ep_amdgpu-0.1.0.dist-info/METADATA").decode()
        wheel_file = archive.read("onnxruntime_ep_amdgpu-0.1.0.dist-info/WHEEL").decode()
    assert "onnxruntime_ep_amdgpu/libamdgpu-ep.so" in names
    assert "onnxruntime_ep_amdgpu/libmigraphx-backend.so" in names
    assert "onnxruntime_ep_amdgpu/libhipdnn-backend.so" not in names  # feature off
    # No ONNX Runtime dependency (it would replace the flavour a user has); the description says which to get.
    assert "Requires-Dist" not in metadata
    assert "Needs ONNX Runtime `>=1.24` (the plugin EP API)" in metadata
    assert "`onnxruntime-migraphx` (AMD's build with its MIGraphX EP" in metadata
    assert "```sh\npython -m onnxruntime_ep_amdgpu\n```\n\nsays whether this machine can run the EP" in metadata
    assert "Source revision: 0123abc" in metadata and "ROCm version: 7.2.0" in metadata
    assert "Patches applied: 0001-rename-hipep-to-hipdnn.patch" in metadata
    assert "GPU targets: gfx90a, gfx1030" in metadata
    assert "Tag: py3-none-linux_x86_64" in wheel_file and "Root-Is-Purelib: false" in wheel_file

    pkg = load_package(wheel, tmp_path / "unpacked")
    assert Path(pkg.get_library_path()).name == "libamdgpu-ep.so" and Path(pkg.get_library_path()).is_file()
    assert [Path(p).name for p in pkg.get_library_paths()] == ["libamdgpu-ep.so", "libmigraphx-backend.so"]
    assert pkg.get_ep_name() == "AMDGPUExecutionProvider" and pkg.get_ep_names() == ["AMDGPUExecutionProvider"]
    assert pkg.get_build_info()["source_revision"] == "0123abc"

    with_hipdnn = build_wheel(SETTINGS, libs, {**INFO, "features": {"hipdnn": True}}, tmp_path / "out2")
    with zipfile.ZipFile(with_hipdnn) as archive:
        assert "onnxruntime_ep_amdgpu/libhipdnn-backend.so" in archive.namelist()


def test_missing_or_wrong_libraries_are_named(tmp_path):
    libs = stand_in_lib_dir(tmp_path / "lib", hipdnn=False)
    with pytest.raises(ToolkitError, match=r"libhipdnn-backend\.so: library of component 'hipdnn-backend' "
                                           r"\(feature 'hipdnn' is on\) not found"):
        build_wheel(SETTINGS, libs, {**INFO, "features": ["hipdnn"]}, tmp_path / "out")
    # A library without the plugin EP entry points: exported names are checked, not assumed.
    (tmp_path / "plain.c").write_text("int helper(void) { return 1; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(libs / "libmigraphx-backend.so"), str(tmp_path / "plain.c")],
                   check=True)
    with pytest.raises(ToolkitError,
                       match=r"libmigraphx-backend\.so: does not export CreateEpFactories, ReleaseEpFactory"):
        build_wheel(SETTINGS, libs, INFO, tmp_path / "out")
    assert not list((tmp_path / "out").glob("*.whl"))
    # The same library declared a helper an EP loads (plugin = false, hip-ep's libhip-compiler.so) is packaged.
    components = tuple(replace(c, plugin=False) if c.library == "migraphx-backend" else c
                       for c in SETTINGS.components)
    wheel = build_wheel(replace(SETTINGS, components=components), libs, INFO, tmp_path / "out")
    assert f"{SETTINGS.import_package}/libmigraphx-backend.so" in zipfile.ZipFile(wheel).namelist()


def test_two_builds_and_repairs_are_byte_identical_and_honour_source_date_epoch(tmp_path, monkeypatch):
    libs = stand_in_lib_dir(tmp_path / "lib")
    first = build_wheel(SETTINGS, libs, INFO, tmp_path / "a")
    second = build_wheel(SETTINGS, libs, INFO, tmp_path / "b")
    assert sha256_file(first) == sha256_file(second)
    assert (sha256_file(repair_bundling(first, tmp_path / "ra").wheel)
            == sha256_file(repair_bundling(second, tmp_path / "rb").wheel))

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14 22:13:20 UTC
    dated = build_wheel(SETTINGS, libs, INFO, tmp_path / "c")
    repaired = repair_bundling(dated, tmp_path / "rc").wheel
    for wheel in (dated, repaired):
        with zipfile.ZipFile(wheel) as archive:
            assert {i.date_time for i in archive.infolist()} == {(2023, 11, 14, 22, 13, 20)}
    assert sha256_file(dated) != sha256_file(first)


def test_repair_excludes_rocm_grafts_the_rest_and_reports_auditwheels_tag(tmp_path):
    require_tool(ROCM_LIB.exists(), f"{ROCM_LIB} is needed (apt-get install libamdhip64-dev)")
    libs = stand_in_lib_dir(tmp_path / "lib",
                            umbrella_libs=["-l:libamdhip64.so.5", "-l:libnuma.so.1", "-l:libzstd.so.1"])
    wheel = build_wheel(SETTINGS, libs, INFO, tmp_path / "out")
    result = repair_bundling(wheel, tmp_path / "repaired")
    with zipfile.ZipFile(result.wheel) as archive:
        names = archive.namelist()
        tags = archive.read("onnxruntime_ep_amdgpu-0.1.0.dist-info/WHEEL").decode()
    assert not [n for n in names if "amdhip64" in n or "libnuma" in n or "libhsa" in n or "libdrm" in n]
    assert [n for n in names if n.startswith("onnxruntime_ep_amdgpu.libs/libzstd-")], names
    assert result.grafted and all("libzstd-" in g for g in result.grafted)
    assert result.excluded == ("libamdhip64.so.5", "libnuma.so.1")
    assert result.tag.startswith("manylinux_") and result.wheel.name.endswith(f"-py3-none-{result.tag}.whl")
    assert f"Tag: py3-none-{result.tag}" in tags

    report = inspect_wheel(result.wheel)
    assert report.needed("rocm") == ("libamdhip64.so.5", "libnuma.so.1")
    assert report.needed("other") == ()
    umbrella = next(lib for lib in report.libraries if lib.path.endswith("libamdgpu-ep.so"))
    assert umbrella.ep_entry_points == ("CreateEpFactories", "ReleaseEpFactory")
    assert umbrella.rpath == ("$ORIGIN/../onnxruntime_ep_amdgpu.libs",)
    assert report.build_info["patches"] == ["0001-rename-hipep-to-hipdnn.patch"]


def test_tag_is_the_one_auditwheel_computes_from_the_symbols(tmp_path):
    libs = stand_in_lib_dir(tmp_path / "lib")
    wheel = build_wheel(SETTINGS, libs, INFO, tmp_path / "out")
    expected = auditwheel_sym_tag(wheel)
    result = repair_bundling(wheel, tmp_path / "repaired")
    assert result.tag == expected
    # A newer glibc symbol moves the tag: it is computed from the libraries, not asserted.
    (tmp_path / "new.c").write_text("#include <sys/random.h>\nint draw(void){char b; return getrandom(&b,1,0);}\n")
    build_c_library(libs / "libamdgpu-ep.so", [str(tmp_path / "new.c")])
    newer = build_wheel(SETTINGS, libs, INFO, tmp_path / "out2")
    newer_result = repair_bundling(newer, tmp_path / "repaired2")
    assert newer_result.tag == auditwheel_sym_tag(newer) != result.tag


@pytest.mark.parametrize(
    "flags, message",
    [
        (["-Wl,-z,execstack"], "onnxruntime_ep_amdgpu/libamdgpu-ep.so: executable stack (PT_GNU_STACK flags RWX)"),
        (["-Wl,-rpath,/home/x", "-Wl,--enable-new-dtags"],
         "onnxruntime_ep_amdgpu/libamdgpu-ep.so: RUNPATH entry '/home/x' is neither inside the wheel"),
        (["-Wl,-rpath,$ORIGIN/../../outside", "-Wl,--disable-new-dtags"],
         "onnxruntime_ep_amdgpu/libamdgpu-ep.so: RPATH entry '$ORIGIN/../../outside' points outside the wheel"),
    ],
)
def test_repair_refuses_unsafe_libraries(tmp_path, flags, message):
    libs = stand_in_lib_dir(tmp_path / "lib", umbrella_flags=flags)
    wheel = build_wheel(SETTINGS, libs, INFO, tmp_path / "out")
    with pytest.raises(ToolkitError) as err:
        repair_bundling(wheel, tmp_path / "repaired")
    assert message in str(err.value)
    assert not list((tmp_path / "repaired").glob("*.whl")), "a failed repair must leave no wheel"


def test_rocm_and_origin_runpaths_are_accepted(tmp_path):
    libs = stand_in_lib_dir(tmp_path / "lib", umbrella_flags=["-Wl,-rpath,$ORIGIN:/opt/rocm/lib:/opt/rocm-7.2.0/lib",
                                                                 "-Wl,--enable-new-dtags"])
    result = repair_bundling(build_wheel(SETTINGS, libs, INFO, tmp_path / "out"), tmp_path / "repaired")
    umbrella = next(lib for lib in inspect_wheel(result.wheel).libraries if lib.path.endswith("libamdgpu-ep.so"))
    assert umbrella.runpath == ("$ORIGIN", "/opt/rocm/lib", "/opt/rocm-7.2.0/lib")


def test_inspect_says_how_much_of_each_library_is_debug_info(tmp_path):
    libs = stand_in_lib_dir(tmp_path / "lib", umbrella_flags=["-g"])
    wheel = build_wheel(SETTINGS, libs, INFO, tmp_path / "out")
    report = {Path(lib.path).name: lib for lib in inspect_wheel(wheel).libraries}
    umbrella, backend = report["libamdgpu-ep.so"], report["libmigraphx-backend.so"]
    assert umbrella.size == (libs / "libamdgpu-ep.so").stat().st_size
    assert 0 < umbrella.debug_bytes < umbrella.size and backend.debug_bytes == 0
    shown = subprocess.run([sys.executable, "-m", "toolkit", "inspect", str(wheel)], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    after = {lines[i - 1].strip(): line.strip() for i, line in enumerate(lines) if line.strip().startswith("size:")}
    assert re.fullmatch(r"size: \d+\.\d KiB \(\d+\.\d KiB of it debug info\)",
                        after["onnxruntime_ep_amdgpu/libamdgpu-ep.so"]), after
    assert re.fullmatch(r"size: \d+\.\d KiB \(no debug info\)", after["onnxruntime_ep_amdgpu/libmigraphx-backend.so"])


def offload_bundle(ids: list[str]) -> bytes:
    header = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(ids))
    entries = b"".join(struct.pack("<QQQ", 0, 0, len(i)) + i.encode() for i in ids)
    return header + entries


def test_gpu_targets_come_from_the_hip_fatbin_section(tmp_path):
    data = offload_bundle(["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"]) + b"\0" * 16
    data += offload_bundle(["hipv4-amdgcn-amd-amdhsa--gfx1030", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"])
    array = ",".join(str(b) for b in data)
    source = tmp_path / "fatbin.c"
    source.write_text('__attribute__((section(".hip_fatbin"), used)) static const unsigned char fatbin[] = '
                      f'{{{array}}};\n')
    libs = stand_in_lib_dir(tmp_path / "lib")
    build_c_library(libs / "libmigraphx-backend.so", [str(source)])
    assert offload_report(libs / "libmigraphx-backend.so").targets == ("gfx90a:xnack-", "gfx1030")
    assert offload_report(libs / "libamdgpu-ep.so").targets == ()
    report = inspect_wheel(build_wheel(SETTINGS, libs, INFO, tmp_path / "out"))
    backend = next(lib for lib in report.libraries if lib.path.endswith("libmigraphx-backend.so"))
    assert backend.offload_bundles == 2 and report.gpu_targets == ("gfx90a:xnack-", "gfx1030")


def test_cli_inspect_json_and_errors(tmp_path):
    wheel = build_wheel(SETTINGS, stand_in_lib_dir(tmp_path / "lib"), INFO, tmp_path / "out")
    done = subprocess.run([sys.executable, "-m", "toolkit", "inspect", "--json", str(wheel)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tags"] == ["py3-none-linux_x86_64"]
    assert report["ep_libraries"] == ["onnxruntime_ep_amdgpu/libamdgpu-ep.so",
                                      "onnxruntime_ep_amdgpu/libmigraphx-backend.so"]
    missing = subprocess.run([sys.executable, "-m", "toolkit", "inspect", str(tmp_path / "nope.whl")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "nope.whl: wheel not found" in missing.stderr
