"""The sample built for Windows (--toolchain mingw) in the debian-sid-windows root: its DLLs and what they import,
the win_amd64 wheel, two builds giving the same bytes, the smoke under Wine against PyPI's own Windows
onnxruntime.dll, and DLL search: what the wheel carries is loaded from the wheel, never from the working
directory or PATH."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.support.windows_support import BUILD_DIR, compile_dll, inside, toolkit, windows_path
from toolkit.binary.pe import read_pe
from toolkit.binary.windows import import_problems
from toolkit.cmake.commands import read_cache

WORK_TREE = BUILD_DIR / "amdgpu-ep" / "release"
WHEEL = "onnxruntime_ep_amdgpu_sample-0.1.0-py3-none-win_amd64.whl"
DLLS = ("amdgpu-ep.dll", "migraphx-backend.dll", "directx-backend.dll")
ENTRY_POINTS = ("CreateEpFactories", "ReleaseEpFactory")


@pytest.fixture(scope="module")
def windows_build(windows_root: Path) -> Path:
    """The sample's Windows wheel, built (or found up to date) in the root's default build folder."""
    done = toolkit(windows_root, ["build", "--toolchain", "mingw", "--wheel"])
    assert done.returncode == 0, done.stdout + done.stderr
    return WORK_TREE


def test_windows_build_checks_its_dlls_and_packages_a_win_amd64_wheel(windows_build: Path) -> None:
    wheel = windows_build / "wheelhouse" / WHEEL
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert "Tag: py3-none-win_amd64" in archive.read(
            "onnxruntime_ep_amdgpu_sample-0.1.0.dist-info/WHEEL").decode()
        metadata = archive.read("onnxruntime_ep_amdgpu_sample-0.1.0.dist-info/METADATA").decode()
        info = json.loads(archive.read("onnxruntime_ep_amdgpu/_wheel_info.json"))
    assert sorted(n.split("/")[-1] for n in names if n.endswith(".dll")) == sorted(DLLS)
    # The sample's license, and the classifier of the platform the wheel is for (the recipe names no OS).
    assert "onnxruntime_ep_amdgpu_sample-0.1.0.dist-info/licenses/LICENSE" in names
    assert "License-File: LICENSE" in metadata and "License-Expression: MIT" in metadata
    assert "Classifier: Operating System :: Microsoft :: Windows" in metadata and "POSIX" not in metadata
    # What the self-check looks up with Windows' DLL search: each DLL's imports of Windows' own DLLs, as files (the
    # UCRT's api-ms-win-crt-* sets are names the loader resolves).
    external = {c["file"]: c["external_needed"] for c in info["components"]}
    for name in DLLS:
        facts = read_pe(windows_build / "lib" / name)
        assert external[name] == [i for i in facts.imports if not i.lower().startswith("api-ms-win-")], name
        assert "KERNEL32.dll" in external[name]
        assert facts.exports == ENTRY_POINTS, name
        assert facts.machine == "x86_64"
        # Windows' own DLLs and the Universal CRT only: no MinGW runtime DLL, no MSVCRT.DLL.
        assert import_problems(facts, DLLS) == [], name
        assert "KERNEL32.dll" in facts.imports and not any(i.lower() == "msvcrt.dll" for i in facts.imports)
        assert facts.timestamp == 0 and facts.debug_entries == 0


def test_two_windows_builds_give_the_same_bytes(windows_root: Path, windows_build: Path, tmp_path: Path) -> None:
    # Another build folder, path and all: nothing of where a build ran may reach the DLLs or the wheel.
    done = toolkit(windows_root, ["build", "--toolchain", "mingw", "--wheel"], build_dir=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    again = tmp_path / "amdgpu-ep" / "release"

    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    for name in DLLS:
        assert digest(again / "lib" / name) == digest(windows_build / "lib" / name), name
    assert digest(again / "wheelhouse" / WHEEL) == digest(windows_build / "wheelhouse" / WHEEL)


def test_wine_smoke_registers_the_umbrella_with_pypis_windows_onnxruntime(windows_root: Path,
                                                                          windows_build: Path) -> None:
    done = toolkit(windows_root, ["build", "--toolchain", "mingw", "--smoke"])
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert not re.search(r"^FAIL", out, re.M), out
    for runtime, version in (("onnxruntime", "1.32.0"), ("onnxruntime-directml", "1.24.4")):
        # Step 1: ORT's own DLL registers ours; the umbrella forwards the WebGPU EP's factory (the recipe's
        # expect_log lines, checked by the smoke), and offers its device under its own name.
        assert re.search(rf"^PASS {runtime} {version} register: AMDGPUExecutionProvider registered from "
                         r"Z:\\.*\\amdgpu-ep\.dll, 1 device\(s\)$", out, re.M), out
        assert re.search(r"^  device AMDGPUExecutionProvider\|.*\|GPU$", out, re.M)
        # Step 2: that device is a GPU Wine's DXGI found (lavapipe through vkd3d).
        assert re.search(rf"^PASS {runtime} {version} device: GPU ", out, re.M)
        # Step 3 runs as far as Wine carries it: a pass, or a stop naming the call Wine could not make.
        session = re.search(rf"^(PASS|STOP) {runtime} {version} session: (.*)$", out, re.M)
        assert session, out
        if session.group(1) == "STOP":
            assert re.match(r"Wine cannot carry it: \w+ \(", session.group(2)), session.group(2)
        # Step 4: the wheel's own self-check, in Windows CPython beside that runtime's onnxruntime package, finds the
        # EP ready: registered through Python, with the device the harness saw.
        assert re.search(rf"^PASS {runtime} {version} selfcheck: ready, 1 device\(s\) \(Windows .*, under Wine "
                         r"[\d.]+; package in Z:\\.*\\onnxruntime_ep_amdgpu\)$", out, re.M), out
    assert out.rstrip().endswith("WINE SMOKE PASS")


PROBE_EP = r"""
#include <stddef.h>
#include <stdio.h>
__declspec(dllimport) const char* WhichDirectML(void);
__declspec(dllexport) void* CreateEpFactories(const char* name, const void* api, const void* logger,
                                              void** factories, size_t max, size_t* count) {
  fprintf(stderr, "[probe-ep] DirectML.dll in use: %s\n", WhichDirectML());
  fflush(stderr);
  *count = 0;
  return NULL;
}
__declspec(dllexport) void* ReleaseEpFactory(void* factory) { return NULL; }
"""


def directml(name: str) -> str:
    return f'__declspec(dllexport) const char* WhichDirectML(void) {{ return "{name}"; }}\n'


def test_a_carried_dll_is_loaded_from_the_wheel_never_from_the_working_directory_or_path(
        windows_root: Path, windows_build: Path, tmp_path: Path) -> None:
    """The DirectX backend loads its EP, which imports DirectML.dll: the copy beside it is the one loaded, with a
    decoy DirectML.dll in the working directory and another on PATH; without the copy beside it, the load fails
    rather than take a decoy."""
    site = tmp_path / "site"
    with zipfile.ZipFile(windows_build / "wheelhouse" / WHEEL) as archive:
        archive.extractall(site)
    package = site / "onnxruntime_ep_amdgpu"
    carried = compile_dll(windows_root, package, "DirectML", directml("the wheel's"))
    compile_dll(windows_root, package, "probe-ep", PROBE_EP, str(carried))
    for where in ("cwd", "path"):
        (tmp_path / where).mkdir()
        compile_dll(windows_root, tmp_path / where, "DirectML", directml(f"DECOY in {where}"))
    headers = Path(read_cache(windows_build / "cmake")["ONNXRUNTIME_INCLUDE_DIR"])
    harness = tmp_path / "harness.exe"
    built = inside(windows_root, ["x86_64-w64-mingw32ucrt-gcc", "-O2", "-w", "-I", str(headers), "-o", str(harness),
                                  str(Path(__file__).parents[2] / "toolkit" / "smoke" / "wine" / "harness.c"),
                                  "-static"], [tmp_path, headers, Path(__file__).parents[2]])
    assert built.returncode == 0, built.stderr
    ort = _stock_onnxruntime_dll()
    prefix = tmp_path / "prefix"

    def run() -> str:
        env = {"WINEPREFIX": str(prefix), "WINEDEBUG": "-all", "WINEDLLOVERRIDES": "mscoree,mshtml=",
               "WINEPATH": windows_path(tmp_path / "path"), "AMDGPU_EP_PROFILE": "directx",
               "AMDGPU_DIRECTX_EP_LIBRARY": windows_path(package / "probe-ep.dll")}
        done = inside(windows_root, ["wine", str(harness), windows_path(ort), windows_path(package / "amdgpu-ep.dll"),
                                     "AMDGPUExecutionProvider"], [tmp_path, ort.parent], env, cwd=tmp_path / "cwd")
        return done.stdout + done.stderr

    out = run()
    assert "[probe-ep] DirectML.dll in use: the wheel's" in out, out
    assert "DECOY" not in out
    carried.unlink()
    out = run()
    assert "DECOY" not in out, out
    assert re.search(r"\[directx-backend\] cannot load .*probe-ep\.dll: error 126", out), out


def test_the_self_check_in_windows_cpython_follows_windows_dll_search(windows_root: Path, windows_build: Path,
                                                                     tmp_path: Path) -> None:
    """The wheel's own `python -m onnxruntime_ep_amdgpu`, in Windows CPython under Wine beside PyPI's onnxruntime,
    with a packaged DLL that imports DirectML.dll (a probe the test adds, with a DirectML.dll, to the component
    table) and a decoy DirectML.dll in the working directory and on PATH: the probe is bound to the wheel's copy,
    Windows' own DLLs are found in the system folder, Wine's adapter is named, and the package's paths are Windows
    paths. With the wheel's copy deleted the probe is bound to the working directory's decoy, and the self-check
    says so and what to do."""
    from toolkit.smoke.wine import selfcheck_argv, selfcheck_facts
    from toolkit.smoke.wine_inputs import python_folder, runtimes, unpacked, windows_python
    from toolkit.util.cachedir import default_cache_dir

    cache = default_cache_dir()
    python = python_folder(windows_python(), cache)
    paths = [tmp_path / "site", unpacked(runtimes()[0], cache),
             *(unpacked(pinned, cache) for pinned in windows_python().package)]
    with zipfile.ZipFile(windows_build / "wheelhouse" / WHEEL) as archive:
        archive.extractall(paths[0])
    package = paths[0] / "onnxruntime_ep_amdgpu"
    carried = compile_dll(windows_root, package, "DirectML", directml("the wheel's"))
    compile_dll(windows_root, package, "probe", "__declspec(dllimport) const char* WhichDirectML(void);\n"
                "__declspec(dllexport) const char* Probe(void) { return WhichDirectML(); }\n", str(carried))
    info_path = package / "_wheel_info.json"
    info = json.loads(info_path.read_text())
    info["components"] += [{"file": name, "ep_name": None, "plugin": False, "feature": None, "runtime": None,
                            "runpath": [], "rocm_needed": [], "external_needed": [], "dlopens": []}
                           for name in ("probe.dll", "DirectML.dll")]
    info_path.write_text(json.dumps(info))
    for where in ("cwd", "path"):
        (tmp_path / where).mkdir()
        compile_dll(windows_root, tmp_path / where, "DirectML", directml(f"DECOY in {where}"))
    env = {"WINEPREFIX": str(tmp_path / "prefix"), "WINEDEBUG": "-all",
           "WINEDLLOVERRIDES": "mscoree,mshtml=;winedbg.exe=d", "WINEPATH": windows_path(tmp_path / "path")}

    def selfcheck(*options: str) -> tuple[dict | None, str, str]:
        done = inside(windows_root, ["xvfb-run", "-a", *selfcheck_argv(python, "onnxruntime_ep_amdgpu", paths,
                                                                         *options)],
                      [tmp_path, cache], env, cwd=tmp_path / "cwd")
        facts, said = selfcheck_facts(done.stdout, done.stderr, done.returncode)
        return facts, said, done.stdout

    facts, said, _ = selfcheck("--json")
    assert facts is not None, said
    assert facts["package_dir"] == windows_path(package)
    assert "under Wine" in facts["system"]["name"] and facts["system"]["id"] == "windows"
    probe = next(lib for lib in facts["libraries"] if lib["file"] == "probe.dll")
    assert probe["loads"], probe
    assert [(d["dll"], d["bound_to"], d["is_wheel_copy"]) for d in probe["carried_imports"]] == [
        ("DirectML.dll", windows_path(package / "DirectML.dll"), True)]
    # Windows' own DLLs the build recorded (no API set: those are no files), found where Windows keeps them.
    system = {lib["soname"]: lib for lib in facts["external_libraries"]}
    assert "KERNEL32.dll" in system and not any(name.startswith("api-ms-win-") for name in system)
    assert all(lib["found"] and lib["loads"] for lib in system.values()), system
    assert system["KERNEL32.dll"]["how"] in ("already loaded in this process", "KnownDLLs", "system folder")
    # Wine's own adapter is no AMD one (a prefix without the smoke's GPU ids): the advice is Windows'.
    assert facts["gpus"]["adapters"] and not facts["gpus"]["amd"]
    assert facts["missing"].startswith("no AMD GPU among DirectX's adapters (")
    assert "AMD's Windows driver" in facts["missing"]

    # The package's API, as a Windows user calls it: Windows paths, and ORT's own registration through Python.
    (paths[0] / "api_probe.py").write_text(
        "import onnxruntime as ort, onnxruntime_ep_amdgpu as ep\n"
        "print(ep.get_library_path()); print(ep.get_ep_name(), len(ep.register_execution_provider_library(ort)))\n")
    done = inside(windows_root, selfcheck_argv(python, "api_probe", paths), [tmp_path, cache], env,
                  cwd=tmp_path / "cwd")
    assert done.stdout.replace("\r", "").splitlines()[:2] == [
        windows_path(package / "amdgpu-ep.dll"), "AMDGPUExecutionProvider 0"], done.stdout + done.stderr

    carried.unlink()
    facts, said, report = selfcheck()
    decoy = windows_path(tmp_path / "cwd" / "DirectML.dll")
    assert f"probe.dll (a library the EP loads, not an EP): loads; its DirectML.dll is {decoy}, NOT the wheel's copy" \
        in report, report
    assert (f"not ready: probe.dll took DirectML.dll from {decoy}: the wheel's copy "
            f"({windows_path(package / 'DirectML.dll')}) is missing. What to do: reinstall the package: pip install "
            "--force-reinstall onnxruntime-ep-amdgpu-sample==0.1.0") in report, report


def _stock_onnxruntime_dll() -> Path:
    """PyPI's onnxruntime.dll as the smoke test fetched it into the toolkit cache."""
    from toolkit.smoke.wine_inputs import runtimes
    from toolkit.util.cachedir import default_cache_dir as cache_dir

    stock = runtimes()[0]
    path = cache_dir() / "windows" / stock.sha256 / stock.dll
    if not path.is_file():  # this test alone: the smoke above fetches it
        from toolkit.smoke.wine_inputs import unpacked

        unpacked(stock, cache_dir())
    return path


def test_windows_wheel_is_not_installed_into_a_linux_venv(windows_build: Path, tmp_path: Path) -> None:
    # pip refuses a win_amd64 wheel here: the tag is honest about where it runs.
    shutil.copy(windows_build / "wheelhouse" / WHEEL, tmp_path)
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index",
                           str(tmp_path / WHEEL)], capture_output=True, text=True)
    assert done.returncode != 0
    assert "is not a supported wheel on this platform" in done.stderr
