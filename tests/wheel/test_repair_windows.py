"""The repair of a win_amd64 wheel (toolkit/wheel/repair_windows.py): delvewheel, then the toolkit's own check of
what every DLL imports. A DLL that needs MinGW's runtime DLLs is refused by name, and so is a DLL the wheel carries
but its tree did not build (DirectML.dll) without its license."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.support.windows_support import TRIPLET, compile_dll, inside
from toolkit.util.errors import ToolkitError
from toolkit.wheel.repair_windows import repair_windows_wheel

# iostream and an exception: what makes a DLL need libstdc++ and libgcc unless they are linked in.
SOURCE = r"""
#include <iostream>
#include <stdexcept>
extern "C" __declspec(dllexport) int CreateEpFactories(int n) {
  std::cout << "probe" << std::endl;
  if (n < 0) throw std::runtime_error("negative");
  return n;
}
"""


def windows_wheel(folder: Path, dll: Path, tag: str = "win_amd64", extra: dict[str, bytes] | None = None,
                  metadata: str = "") -> Path:
    wheel = folder / f"probe-0.1.0-py3-none-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(dll, f"probe/{dll.name}")
        archive.writestr("probe/__init__.py", "")
        for member, data in (extra or {}).items():
            archive.writestr(member, data)
        archive.writestr("probe-0.1.0.dist-info/METADATA",
                         "Metadata-Version: 2.4\nName: probe\nVersion: 0.1.0\n" + metadata)
        archive.writestr("probe-0.1.0.dist-info/WHEEL",
                         f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n")
        archive.writestr("probe-0.1.0.dist-info/RECORD", "")
    return wheel


def test_a_linux_wheel_is_not_a_windows_repairs_input(tmp_path: Path) -> None:
    dll = tmp_path / "probe.dll"
    dll.write_bytes(b"MZ")
    with pytest.raises(ToolkitError, match="a Windows repair takes a win_\\* wheel, not linux_x86_64"):
        repair_windows_wheel(windows_wheel(tmp_path, dll, "linux_x86_64"), tmp_path / "out")


@pytest.mark.parametrize("static", [True, False], ids=["runtime-linked-in", "needs-mingw-dlls"])
def test_repair_keeps_a_self_contained_dll_and_refuses_one_that_needs_mingws_runtime(
        windows_root: Path, tmp_path: Path, static: bool) -> None:
    (tmp_path / "probe.cc").write_text(SOURCE)
    dll = tmp_path / "probe.dll"
    built = inside(windows_root, [f"{TRIPLET}-g++", "-shared", "-O2", "-o", str(dll), str(tmp_path / "probe.cc"),
                                  *(["-static"] if static else [])], [tmp_path])
    assert built.returncode == 0, built.stderr
    wheel = windows_wheel(tmp_path, dll)
    out = tmp_path / "out"
    if static:
        result = repair_windows_wheel(wheel, out)
        assert result.tag == "win_amd64" and result.grafted == ()
        assert [p.name for p in out.iterdir()] == [wheel.name]
        return
    with pytest.raises(ToolkitError) as error:
        repair_windows_wheel(wheel, out)
    assert str(error.value).startswith(f"{wheel.name}: probe/probe.dll: imports ")
    assert "libstdc++-6.dll (MinGW's runtime DLL: link it in statically, -static)" in str(error.value)
    assert "Traceback" not in str(error.value)
    assert not list(out.glob("*.whl"))  # nothing half-done


def test_a_carried_dll_without_its_license_is_refused_and_passes_with_it(windows_root: Path, tmp_path: Path) -> None:
    (tmp_path / "probe.cc").write_text(SOURCE)
    dll = tmp_path / "probe.dll"
    built = inside(windows_root, [f"{TRIPLET}-g++", "-shared", "-O2", "-o", str(dll), str(tmp_path / "probe.cc"),
                                  "-static"], [tmp_path])
    assert built.returncode == 0, built.stderr
    # A DLL the tree did not build, carried beside the one that loads it (as DirectML.dll is).
    carried = {"probe/Carried.dll": dll.read_bytes()}
    bare = windows_wheel(tmp_path, dll, extra=carried)
    with pytest.raises(ToolkitError) as error:
        repair_windows_wheel(bare, tmp_path / "out", built=["probe.dll"])
    assert ("probe/Carried.dll: carried library Carried.dll has no license in "
            "probe-0.1.0.dist-info/licenses/bundled/Carried.dll/") in str(error.value)
    assert not list((tmp_path / "out").glob("*.whl"))
    licensed = windows_wheel(tmp_path, dll, extra={
        **carried, "probe-0.1.0.dist-info/licenses/bundled/Carried.dll/LICENSE": b"the carried DLL's license\n"},
        metadata="License-File: bundled/Carried.dll/LICENSE\n")
    result = repair_windows_wheel(licensed, tmp_path / "out", built=["probe.dll"])
    assert result.wheel.name == licensed.name


def test_windows_own_dlls_and_a_dll_the_recipe_says_the_process_has_are_neither_vendored_nor_refused(
        windows_root: Path, tmp_path: Path) -> None:
    # d3d12.dll (Windows', which delvewheel's own list lacks), and a DLL the recipe's [[outputs]] needs names as the
    # process's own (here an onnxruntime.dll: a C program on ORT's C API has one; a Python process has none, which is
    # why the real recipe names no such DLL and the refusal says so).
    ort = compile_dll(windows_root, tmp_path, "onnxruntime", "__declspec(dllexport) int OrtGetApiBase(void) "
                                                             "{ return 1; }\n")
    source = ("#include <initguid.h>\n#include <d3d12.h>\n__declspec(dllimport) int OrtGetApiBase(void);\n"
              "__declspec(dllexport) int CreateEpFactories(void) { void* d = 0; "
              "return OrtGetApiBase() + (int)D3D12CreateDevice(0, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, &d); }\n")
    dll = compile_dll(windows_root, tmp_path, "probe", source, str(ort), "-ld3d12")
    wheel = windows_wheel(tmp_path, dll)
    with pytest.raises(ToolkitError) as error:
        repair_windows_wheel(wheel, tmp_path / "refused", built=["probe.dll"])
    assert "probe/probe.dll: imports onnxruntime.dll (neither Windows' own" in str(error.value)
    assert "not onnxruntime.dll, which a Python process has none of" in error.value.hint
    result = repair_windows_wheel(wheel, tmp_path / "out", built=["probe.dll"], provided=["onnxruntime.dll"])
    assert result.grafted == () and [p.name for p in (tmp_path / "out").iterdir()] == [wheel.name]
