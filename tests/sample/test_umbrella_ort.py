"""The bundled sample tree, built and patched, driven by real onnxruntime with a real plugin EP behind it.

Every ORT interaction runs in a child Python, so its stderr (the libraries' log lines) can be read and its
/proc/self/maps shows which libraries are loaded. The real EP behind the shims is PyPI's WebGPU plugin EP;
without a GPU it yields no device, so devices are never asserted, only factories, loads and unloads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.sample_tree import SAMPLE_DIR, SAMPLE_SERIES, cmake_and_ninja, configure_and_build, series_patches
from tests.support.tools import DATA, require_tool
from toolkit.patching import load_series

LIBS = {"amdgpu-ep", "migraphx-backend", "hipdnn-backend"}

# Runs the steps given as JSON in argv[1]; prints, as JSON, what each "maps" step saw loaded.
DRIVER = r"""
import json, os, sys
import onnxruntime as ort

def loaded(names):
    maps = open("/proc/self/maps").read()
    return {name: ("/" + name) in maps for name in names}

seen = []
for step in json.loads(sys.argv[1]):
    kind = step[0]
    if kind == "register":
        ort.register_execution_provider_library(step[1], step[2])
    elif kind == "register_error":  # registration must fail; its message is what the user reads
        try:
            ort.register_execution_provider_library(step[1], step[2])
            seen.append(None)
        except Exception as exc:
            seen.append(str(exc))
    elif kind == "unregister":
        ort.unregister_execution_provider_library(step[1])
    elif kind == "setenv":
        os.environ[step[1]] = step[2]
    elif kind == "devices":
        seen.append(sorted({d.ep_name for d in ort.get_ep_devices()}))
    elif kind == "ep_names":  # what ORT shows of each EP factory (name and vendor) through its devices
        seen.append(sorted({(d.ep_name, d.ep_vendor) for d in ort.get_ep_devices()}))
    elif kind == "maps":
        seen.append(loaded(step[1]))
    elif kind == "memory":  # each EP device's default memory: (EP, name, vendor id, memory type)
        infos = [(d.ep_name, d.memory_info(ort.OrtDeviceMemoryType.DEFAULT)) for d in ort.get_ep_devices()]
        seen.append(sorted([name, i.name, i.device_vendor_id, i.device_mem_type.name] for name, i in infos if i))
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def webgpu_ep() -> str:
    try:
        import onnxruntime  # noqa: F401
        import onnxruntime_ep_webgpu
    except ImportError as exc:
        require_tool(False, f"pip install onnxruntime onnxruntime-ep-webgpu: {exc}")
    return onnxruntime_ep_webgpu.get_library_path()


@dataclass
class Run:
    seen: list
    stderr: str

    def lines(self, pattern: str) -> list[str]:
        return [line for line in self.stderr.splitlines() if re.fullmatch(pattern, line)]


def run_ort(steps: list, **env: str) -> Run:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("AMDGPU_")}
    child_env.update(env)
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(steps)], env=child_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"driver failed ({done.returncode}):\n{done.stderr}"
    return Run(json.loads(done.stdout), done.stderr)


def umbrella(lib: Path) -> str:
    return str(lib / "libamdgpu-ep.so")


WEBGPU = "libonnxruntime_providers_webgpu.so"
SHIM = "libmigraphx-backend.so"


def test_factory_is_forwarded_to_the_real_ep_and_unloaded_after_release(sample_libs, webgpu_ep):
    lib = sample_libs()
    names = [WEBGPU, SHIM]
    run = run_ort([["register", "amdgpu", umbrella(lib)], ["devices"], ["maps", names],
                   ["unregister", "amdgpu"], ["maps", names]],
                  AMDGPU_MIGRAPHX_EP_LIBRARY=webgpu_ep, AMDGPU_EP_VERBOSE="1")
    devices, before, after = run.seen
    assert "CPUExecutionProvider" in devices  # the device query works with the umbrella registered
    assert len(run.lines(rf"\[migraphx-backend\] forwarded 1 factory from {re.escape(webgpu_ep)}")) == 1
    assert len(run.lines(rf"\[amdgpu-ep\] forwarded 1 factory from {re.escape(str(lib / SHIM))}")) == 1
    assert before == {WEBGPU: True, SHIM: True}
    assert after == {WEBGPU: False, SHIM: False}
    assert run.lines(rf"\[migraphx-backend\] unloaded {re.escape(webgpu_ep)}")


def test_missing_real_ep_gives_zero_factories_and_says_where_it_looked(sample_libs):
    lib = sample_libs()
    steps = [["register", "amdgpu", umbrella(lib)], ["maps", [SHIM]]]
    run = run_ort(steps, AMDGPU_MIGRAPHX_EP_LIBRARY="/nonexistent/libep.so", AMDGPU_EP_VERBOSE="1")
    assert run.lines(r"\[migraphx-backend\] EP library not found: looked at "
                     r"\$AMDGPU_MIGRAPHX_EP_LIBRARY=/nonexistent/libep\.so; "
                     r"set AMDGPU_MIGRAPHX_EP_LIBRARY to the MIGraphX EP library")
    assert run.lines(r"\[amdgpu-ep\] forwarded 0 factories from .*/libmigraphx-backend\.so")
    assert run.lines(r"\[amdgpu-ep\] profile auto: no backend gave a factory \(tried migraphx\)")
    assert run.seen == [{SHIM: False}]  # a shim that gave nothing is not kept loaded

    # Unset: the default file beside the shim is the one place looked at. ORT 1.31 calls CreateEpFactories
    # again when a library gave no factory, so there is one line per call ("profile ..." marks each call).
    run = run_ort(steps, AMDGPU_EP_VERBOSE="1")
    default = re.escape(str(lib / "libonnxruntime_providers_migraphx.so"))
    calls = run.lines(r"\[amdgpu-ep\] profile auto \(from default\)")
    not_found = run.lines(r"\[migraphx-backend\] EP library not found: .*")
    assert calls and len(not_found) == len(calls)
    assert re.fullmatch(rf"\[migraphx-backend\] EP library not found: looked at \$AMDGPU_MIGRAPHX_EP_LIBRARY "
                        rf"\(unset\), {default}; set AMDGPU_MIGRAPHX_EP_LIBRARY to the MIGraphX EP library",
                        not_found[0])


def test_missing_backend_shim_gives_zero_factories_and_says_where_it_looked(sample_libs, webgpu_ep):
    lib = sample_libs()
    steps = [["register", "amdgpu", umbrella(lib)], ["maps", [WEBGPU]]]
    run = run_ort(steps, AMDGPU_EP_PROFILE="hipdnn", AMDGPU_HIPDNN_EP_LIBRARY=webgpu_ep)
    where = re.escape(str(lib / "libhipdnn-backend.so"))
    assert run.lines(rf"\[amdgpu-ep\] backend library not found: libhipdnn-backend\.so \(profile hipdnn\); "
                     rf"looked at {where} \(beside amdgpu-ep; \$AMDGPU_EP_BACKEND_DIR unset\); "
                     r"this amdgpu-ep was built without it: configure with -DUSE_HIPDNN=ON")
    assert run.seen == [{WEBGPU: False}]

    run = run_ort(steps, AMDGPU_EP_BACKEND_DIR="/nonexistent", AMDGPU_MIGRAPHX_EP_LIBRARY=webgpu_ep)
    assert run.lines(r"\[amdgpu-ep\] backend library not found: libmigraphx-backend\.so \(profile migraphx\); "
                     r"looked at /nonexistent/libmigraphx-backend\.so \(\$AMDGPU_EP_BACKEND_DIR=/nonexistent\)")
    assert run.lines(r"\[amdgpu-ep\] profile auto: no backend gave a factory \(tried migraphx\)")
    assert run.seen == [{WEBGPU: False}]


@pytest.mark.parametrize("hipdnn", [False, True], ids=["default", "hipdnn"])
def test_libraries_export_only_the_two_entry_points(sample_libs, hipdnn):
    lib = sample_libs(hipdnn)
    built = {p.name for p in lib.glob("*.so")}
    assert built == {f"lib{name}.so" for name in LIBS if hipdnn or name != "hipdnn-backend"}
    for name in sorted(built):
        nm = subprocess.run(["nm", "-D", "--defined-only", str(lib / name)], capture_output=True, text=True, check=True)
        symbols = sorted(line.split()[-1] for line in nm.stdout.splitlines() if line.strip())
        assert symbols == ["CreateEpFactories", "ReleaseEpFactory"], name


def test_real_ep_stays_loaded_until_the_last_factory_is_released(sample_libs, webgpu_ep):
    # Two registrations of the umbrella make ORT call CreateEpFactories twice. ctypes cannot do it: the
    # WebGPU EP dereferences the OrtApiBase, and only ORT has a real one.
    lib = sample_libs()
    names = [WEBGPU, SHIM]
    run = run_ort([["register", "one", umbrella(lib)], ["register", "two", umbrella(lib)],
                   ["unregister", "one"], ["maps", names], ["unregister", "two"], ["maps", names]],
                  AMDGPU_MIGRAPHX_EP_LIBRARY=webgpu_ep, AMDGPU_EP_VERBOSE="1")
    assert run.seen == [{WEBGPU: True, SHIM: True}, {WEBGPU: False, SHIM: False}]
    assert len(run.lines(rf"\[migraphx-backend\] forwarded 1 factory from {re.escape(webgpu_ep)}")) == 2
    assert len(run.lines(r"\[migraphx-backend\] loaded .*")) == 1  # the second call reuses the first load
    events = [line for line in run.stderr.splitlines() if line.startswith("[migraphx-backend] ")]
    assert events[-2:] == [f"[migraphx-backend] released a factory of {webgpu_ep} (0 left)",
                           f"[migraphx-backend] unloaded {webgpu_ep}"]
    assert f"[migraphx-backend] released a factory of {webgpu_ep} (1 left)" in events


def test_failed_load_is_retried_on_the_next_call(sample_libs, webgpu_ep):
    lib = sample_libs()
    run = run_ort([["setenv", "AMDGPU_MIGRAPHX_EP_LIBRARY", "/nonexistent/libep.so"],
                   ["register", "first", umbrella(lib)], ["maps", [WEBGPU]],
                   ["setenv", "AMDGPU_MIGRAPHX_EP_LIBRARY", webgpu_ep],
                   ["register", "second", umbrella(lib)], ["maps", [WEBGPU]]], AMDGPU_EP_VERBOSE="1")
    assert run.seen == [{WEBGPU: False}, {WEBGPU: True}]
    assert len(run.lines(rf"\[migraphx-backend\] forwarded 1 factory from {re.escape(webgpu_ep)}")) == 1


@pytest.fixture
def hipdnn_libs(sample_libs, tmp_path) -> Path:
    """A private copy of the hipdnn build, so that a test can write amdgpu-ep.conf beside the umbrella."""
    lib = tmp_path / "lib"
    shutil.copytree(sample_libs(True), lib)
    return lib


def forwarded_by(run: Run, webgpu_ep: str) -> list[str]:
    return [m.group(1) for line in run.stderr.splitlines()
            if (m := re.fullmatch(rf"\[(\S+-backend)\] forwarded 1 factory from {re.escape(webgpu_ep)}", line))]


def test_profile_from_env_and_conf_file(hipdnn_libs, webgpu_ep):
    both = {"AMDGPU_MIGRAPHX_EP_LIBRARY": webgpu_ep, "AMDGPU_HIPDNN_EP_LIBRARY": webgpu_ep, "AMDGPU_EP_VERBOSE": "1"}
    steps = [["register", "amdgpu", umbrella(hipdnn_libs)]]
    # auto loads every backend (in order); each session then picks one by its profile option.
    assert forwarded_by(run_ort(steps, **both), webgpu_ep) == ["migraphx-backend", "hipdnn-backend"]
    assert forwarded_by(run_ort(steps, **both, AMDGPU_EP_PROFILE="llm"), webgpu_ep) == ["hipdnn-backend"]
    # auto moves on to the next backend when one has no EP.
    no_migraphx = {**both, "AMDGPU_MIGRAPHX_EP_LIBRARY": "/nonexistent/libep.so"}
    assert forwarded_by(run_ort(steps, **no_migraphx), webgpu_ep) == ["hipdnn-backend"]

    conf = hipdnn_libs / "amdgpu-ep.conf"
    conf.write_text("# routing for this install\nprofile = hipdnn\n")
    run = run_ort(steps, **both)
    assert forwarded_by(run, webgpu_ep) == ["hipdnn-backend"]
    assert run.lines(rf"\[amdgpu-ep\] profile hipdnn \(from {re.escape(str(conf))}:2\)")
    # The environment wins over the file.
    assert forwarded_by(run_ort(steps, **both, AMDGPU_EP_PROFILE="migraphx"), webgpu_ep) == ["migraphx-backend"]


def test_unknown_profile_is_named_with_its_source(hipdnn_libs, webgpu_ep):
    # A wrong default profile makes registration itself fail, with an ORT error the user sees.
    steps = [["register_error", "AMDGPUExecutionProvider", umbrella(hipdnn_libs)],
             ["maps", [SHIM, "libhipdnn-backend.so", WEBGPU]]]
    accepted = "accepted: auto, migraphx, hipdnn, directx, llm"
    run = run_ort(steps, AMDGPU_EP_PROFILE="cuda", AMDGPU_MIGRAPHX_EP_LIBRARY=webgpu_ep)
    assert run.seen[0].endswith(
        f"AMDGPUExecutionProvider: unknown profile 'cuda' (from $AMDGPU_EP_PROFILE); {accepted}")
    assert run.seen[1] == {SHIM: False, "libhipdnn-backend.so": False, WEBGPU: False}

    conf = hipdnn_libs / "amdgpu-ep.conf"
    conf.write_text("\nprofile = hipep\n")
    run = run_ort(steps, AMDGPU_MIGRAPHX_EP_LIBRARY=webgpu_ep)
    assert run.seen[0].endswith(f"unknown profile 'hipep' (from {conf}:2); {accepted}")

    conf.write_text("profile hipdnn\n")
    run = run_ort(steps, AMDGPU_MIGRAPHX_EP_LIBRARY=webgpu_ep)
    assert run.seen[0].endswith(f"AMDGPUExecutionProvider: {conf}:1: expected 'profile = <name>', "
                                "found 'profile hipdnn'; fix or remove the line")
    assert run.seen[1] == {SHIM: False, "libhipdnn-backend.so": False, WEBGPU: False}


def test_directx_profile_names_the_missing_windows_backend(sample_libs):
    run = run_ort([["register", "amdgpu", umbrella(sample_libs())]], AMDGPU_EP_PROFILE="directx")
    assert run.lines(r"\[amdgpu-ep\] backend library not found: libdirectx-backend\.so \(profile directx\); "
                     r".*this amdgpu-ep was built without it: configure with -DUSE_DML=ON")


# The patch series itself: checksums, and both patch tools accept it in order on a fresh copy.

def test_series_checksums_and_comments():
    """The series file itself, read by the toolkit's loader: both patches, phase base, each with the sha256
    of its file (computed here) and a comment saying why."""
    entries = load_series(SAMPLE_SERIES).entries
    assert [e.name for e in entries] == ["0001-rename-hipep-to-hipdnn.patch", "0002-make-hipdnn-opt-in.patch"]
    lines = SAMPLE_SERIES.read_text().splitlines()
    for e in entries:
        assert e.phase == "base" and not e.when, e.name
        assert e.sha256 == hashlib.sha256(e.path.read_bytes()).hexdigest(), e.name
        assert e.why.strip() and lines[e.line - 2].startswith("# "), f"{e.name} has no comment saying why"


@pytest.mark.parametrize("tool", ["patch", "git"])
def test_series_applies_with_patch_and_git(tmp_path, tool):
    require_tool(shutil.which(tool) is not None, f"{tool} is not installed (apt-get install -y {tool})")
    tree = tmp_path / "tree"
    shutil.copytree(SAMPLE_DIR, tree)
    for patch in series_patches():
        check = (["patch", "-p1", "--dry-run", "-s", "-i", str(patch)] if tool == "patch"
                 else ["git", "apply", "--check", str(patch)])
        apply = ["patch", "-p1", "-s", "-i", str(patch)] if tool == "patch" else ["git", "apply", str(patch)]
        for command in (check, apply):
            done = subprocess.run(command, cwd=tree, capture_output=True, text=True)
            assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}{done.stderr}"
    assert not (tree / "src" / "hipep").exists()
    assert (tree / "src" / "hipdnn" / "CMakeLists.txt").is_file()
    text = "".join(p.read_text() for p in tree.rglob("*") if p.is_file() and p.suffix in {".txt", ".h", ".cc"})
    assert "USE_HIPEP" not in text and "hipep-backend" not in text and "AMDGPU_HIPEP_EP_LIBRARY" not in text


def test_unpatched_tree_forces_the_hipep_backend(tmp_path):
    # The pre-review state the series exists to fix: USE_AMDGPU alone builds the hipep backend too.
    lib = tmp_path / "lib"
    configure_and_build(SAMPLE_DIR, tmp_path / "cmake", lib, ["-DUSE_AMDGPU=ON"])
    assert {p.name for p in lib.glob("*.so")} == {"libamdgpu-ep.so", "libmigraphx-backend.so", "libhipep-backend.so"}


def test_use_dml_off_windows_is_a_clear_configure_error(tmp_path):
    cmake, ninja = cmake_and_ninja()
    done = subprocess.run([cmake, "-S", str(SAMPLE_DIR), "-B", str(tmp_path), "-G", "Ninja",
                           f"-DCMAKE_MAKE_PROGRAM={ninja}", "-DUSE_AMDGPU=ON", "-DUSE_DML=ON"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "DirectML is Windows-only" in message and "-DUSE_DML=OFF" in message


# The kernel hook: hipified kernels compile into migraphx-backend for the requested targets.

HIP_DEFINES = [
    "-DCMAKE_HIP_PLATFORM=amd",
    "-DCMAKE_HIP_COMPILER=/usr/bin/clang++-15",
    "-DCMAKE_HIP_FLAGS=--rocm-path=/usr --rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
    "-DCMAKE_POLICY_VERSION_MINIMUM=3.5",
]


def test_hipified_kernels_compile_for_the_gpu_targets(tmp_path, monkeypatch):
    require_tool(Path("/usr/bin/clang++-15").exists() and Path("/usr/include/hip/hip_runtime.h").exists(),
                 "HIP is not installed (apt-get install -y hipcc libamdhip64-dev rocm-device-libs rocm-cmake)")
    # A two-rule stand-in for the toolkit's hipify stage: this test is about the CMake hook, not hipify.
    cuda = (SAMPLE_DIR / "kernels" / "cuda" / "batch_pad.cu").read_text()
    hip_dir = tmp_path / "hipified"
    hip_dir.mkdir()
    hip = cuda.replace("<cuda_runtime.h>", "<hip/hip_runtime.h>").replace("cuda", "hip")
    (hip_dir / "batch_pad.hip").write_text(hip)
    monkeypatch.setenv("HIP_PLATFORM", "amd")  # CUDA is installed too; without this HIP tools pick nvcc
    lib = tmp_path / "lib"
    configure_and_build(SAMPLE_DIR, tmp_path / "cmake", lib, [
        "-DUSE_AMDGPU=ON", f"-DAMDGPU_EP_HIP_SOURCES_DIR={hip_dir}", "-DGPU_TARGETS=gfx90a;gfx1030", *HIP_DEFINES])
    backend = (lib / "libmigraphx-backend.so").read_bytes()
    targets = set(re.findall(rb"amdgcn-amd-amdhsa--(gfx\w+)", backend))
    assert targets == {b"gfx90a", b"gfx1030"}
    nm = subprocess.run(["nm", "-D", "--defined-only", str(lib / "libmigraphx-backend.so")],
                        capture_output=True, text=True, check=True)
    assert sorted(line.split()[-1] for line in nm.stdout.splitlines()) == ["CreateEpFactories", "ReleaseEpFactory"]
    readelf = subprocess.run(["readelf", "-d", str(lib / "libmigraphx-backend.so")], capture_output=True, text=True)
    assert "libamdhip64.so" in readelf.stdout


# The umbrella as an OrtEpFactory, driven with ORT's real objects. Without a GPU no backend offers a device,
# so ORT never calls CreateEp: tests/data/umbrella_route_driver.cc calls it with the CPU's real hardware
# device and real session options. What needs a device (the backend's OrtEp running a session) is the GPU
# smoke run's job (README, "GPU smoke run").

DRIVER_SOURCE = DATA / "umbrella_route_driver.cc"


@pytest.fixture(scope="module")
def route_driver(tmp_path_factory) -> tuple[Path, Path]:
    require_tool(shutil.which("g++") is not None, "g++ is needed to build the routing driver (apt-get install g++)")
    from tests.support.sample_tree import ort_prefix

    include = ort_prefix() / "include" / "onnxruntime"
    out = tmp_path_factory.mktemp("driver")
    driver, probe = out / "route_driver", out / "libprobe.so"
    for command in (["g++", "-std=c++17", "-O1", f"-I{include}", str(DRIVER_SOURCE), "-ldl", "-o", str(driver)],
                    ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-DPROBE", f"-I{include}", str(DRIVER_SOURCE),
                     "-o", str(probe)]):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)}:\n{done.stderr}"
    return driver, probe


def drive(route_driver, lib: Path, *entries: str, **env: str) -> subprocess.CompletedProcess:
    import onnxruntime

    runtime = next(Path(onnxruntime.__file__).parent.joinpath("capi").glob("libonnxruntime.so.*"))
    driver, probe = route_driver
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("AMDGPU_")}
    child_env.update(env)
    done = subprocess.run([str(driver), str(runtime), umbrella(lib), str(probe), *entries], env=child_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"driver failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done


def test_umbrella_is_one_amd_factory_routing_sessions_by_profile(sample_libs, webgpu_ep, route_driver):
    lib = sample_libs()
    env = {"AMDGPU_MIGRAPHX_EP_LIBRARY": webgpu_ep, "AMDGPU_EP_VERBOSE": "1"}
    done = drive(route_driver, lib, "ep.amdgpuexecutionprovider.profile=migraphx",
                 "ep.migraphx.max_dynamic_batch=4", **env)
    out = done.stdout.splitlines()
    assert out[0] == "registered"
    # Built against ORT 1.27's header: the factory says so, and ORT calls only what that struct has.
    assert "factory AMDGPUExecutionProvider vendor AMD vendor_id 0x1002 version_supported 27" in out
    assert "offered for the CPU: 0" in out  # the WebGPU backend offers no CPU device, so neither does the umbrella
    # Routed to the MIGraphX backend, whose EP gets the session options with ep.migraphx.* in them ...
    assert ("[amdgpu-ep] session: profile migraphx (from session option ep.amdgpuexecutionprovider.profile) -> "
            "backend migraphx (WebGpuExecutionProvider); options passed on: ep.migraphx.max_dynamic_batch=4"
            ) in done.stderr.splitlines()
    # ... and refused there, as an ORT status, because that backend never offered the CPU.
    refused = [line for line in out if line.startswith("CreateEp: error")]
    assert len(refused) == 1 and re.fullmatch(
        r"CreateEp: error 2: AMDGPUExecutionProvider: profile 'migraphx' \(from session option "
        r"ep\.amdgpuexecutionprovider\.profile\): backend migraphx does not offer the CPU vendor_id=0x\w+ "
        r"device_id=0x\w+ \(devices come from get_ep_devices\(\)\)", refused[0]), refused
    assert out[-1] == "done"
    # Releasing the umbrella's factories released the backend's: the real EP is unloaded again.
    assert done.stderr.splitlines()[-3:] == [
        f"[migraphx-backend] unloaded {webgpu_ep}",
        f"[amdgpu-ep] released a factory of {lib / SHIM} (0 left)",
        f"[amdgpu-ep] unloaded {lib / SHIM}"]


def test_session_profile_errors_are_ort_statuses(sample_libs, webgpu_ep, route_driver):
    lib = sample_libs()
    env = {"AMDGPU_MIGRAPHX_EP_LIBRARY": webgpu_ep}
    out = drive(route_driver, lib, "ep.amdgpuexecutionprovider.profile=CUDA", **env).stdout.splitlines()
    assert ("CreateEp: error 2: AMDGPUExecutionProvider: unknown profile 'CUDA' (from session option "
            "ep.amdgpuexecutionprovider.profile); accepted: auto, migraphx, hipdnn, directx, llm") in out
    out = drive(route_driver, lib, "ep.amdgpuexecutionprovider.profile=llm", **env).stdout.splitlines()
    assert ("CreateEp: error 2: AMDGPUExecutionProvider: profile 'llm' (from session option "
            "ep.amdgpuexecutionprovider.profile): the hipdnn backend is not loaded (loaded: migraphx; the "
            "default profile auto from default decides which backends load)") in out
    # No option: the default profile (auto) routes to whichever backend offered the device; none did.
    out = drive(route_driver, lib, **env).stdout.splitlines()
    assert any(re.fullmatch(r"CreateEp: error 2: AMDGPUExecutionProvider: profile 'auto' \(from default\): no "
                            r"backend offered the CPU .*", line) for line in out), out


def test_registered_umbrella_offers_no_device_of_another_name(sample_libs, webgpu_ep):
    # Before: the backend's factory went to ORT unchanged, so its devices showed up as WebGpuExecutionProvider.
    lib = sample_libs()
    run = run_ort([["register", "AMDGPUExecutionProvider", umbrella(lib)], ["devices"]],
                  AMDGPU_MIGRAPHX_EP_LIBRARY=webgpu_ep, AMDGPU_EP_VERBOSE="1")
    assert run.seen == [["CPUExecutionProvider"]]  # no GPU here: no device at all, and none under WebGPU's name
    assert run.lines(r"\[amdgpu-ep\] forwarded 1 factory from .*/libmigraphx-backend\.so")


def test_umbrella_devices_carry_amd_memory_named_as_the_backends(sample_libs, webgpu_ep):
    # The WebGPU EP offers the CPU as a device when asked to allow a software adapter: the one way to see
    # the umbrella's devices here. Their memory is the backend's (its name, which its kernels check) under
    # AMD's vendor id, which onnxruntime-genai's amdgpu provider asks for ("Hip" = GPU memory of 0x1002).
    # Allocating and copying need the adapter itself: the GPU smoke run does that (README).
    lib = sample_libs()
    run = run_ort([["register", "AMDGPUExecutionProvider", umbrella(lib)],
                   ["register", "WebGpuExecutionProvider", webgpu_ep], ["memory"]],
                  AMDGPU_MIGRAPHX_EP_LIBRARY=webgpu_ep, ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER="1",
                  VK_DRIVER_FILES="/nonexistent.json")
    ours, theirs = run.seen[0]
    assert theirs[0] == "WebGpuExecutionProvider" and theirs[2] == 0 and theirs[1].startswith("WebGPU_Buf")
    assert ours == ["AMDGPUExecutionProvider", theirs[1], 0x1002, "DEFAULT"]
