"""The real sample's wheel, end to end: build, repair, install into a fresh venv, register with ORT.

The MIGraphX (and hipDNN) backend shims are pointed at PyPI's onnxruntime-ep-webgpu, a real plugin
EP, so the umbrella forwards real factories. On a machine without a GPU the device checks are
skipped, and the output says so; with --require-gpu that is a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.sample_tree import build_sample
from tests.support.selfcheck_support import ort_range_ends
from tests.support.tools import ROOT
from tests.support.wheel_support import SETTINGS, SMOKE, auditwheel_sym_tag, sample_build_info
from toolkit.smoke.run import run_smoke
from toolkit.util.fsutil import sha256_file
from toolkit.wheel.build import build_wheel
from toolkit.wheel.data import rocm_excludes
from toolkit.wheel.repair import matches_any, repair_wheel

CHECKER = ROOT / "toolkit" / "smoke" / "inside" / "smoke_check.py"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """(lib folder, repaired wheel) per hipdnn setting, built once for this module."""
    built = {}

    def get(hipdnn: bool):
        if hipdnn not in built:
            work = tmp_path_factory.mktemp("hipdnn" if hipdnn else "default")
            libs = build_sample(work, hipdnn)
            wheel = build_wheel(SETTINGS, libs, sample_build_info(hipdnn), work / "dist")
            built[hipdnn] = (libs, wheel, repair_wheel(wheel, work / "wheelhouse"))
        return built[hipdnn]

    return get


def smoke_lines(capfd) -> str:
    out, err = capfd.readouterr()
    return out + err


def assert_device_outcome(output: str) -> None:
    # Here (no GPU) the skip must be said plainly; on a GPU machine the model must have run instead.
    assert ("SKIP device checks skipped: no EP device of type GPU" in output
            or "matches the CPU EP" in output), output


@pytest.mark.network  # the smoke venv installs onnxruntime, its WebGPU EP and onnxruntime-genai from PyPI
@pytest.mark.parametrize("hipdnn", [False, True], ids=["default", "hipdnn"])
def test_sample_wheel_repairs_clean_and_smokes_in_a_fresh_venv(sample, capfd, hipdnn, tmp_path):
    libs, built, result = sample(hipdnn)
    with zipfile.ZipFile(result.wheel) as archive:
        names = archive.namelist()
    packaged = sorted(n.split("/")[-1] for n in names if n.endswith(".so"))
    expected = ["libamdgpu-ep.so", "libmigraphx-backend.so"] + (["libhipdnn-backend.so"] if hipdnn else [])
    assert packaged == sorted(expected)
    assert not [n for n in names if matches_any(n.split("/")[-1], rocm_excludes())]
    assert result.tag == auditwheel_sym_tag(built)

    # The default build also runs onnxruntime-genai's "amdgpu" provider, and the wheel beside PyPI's lowest and newest
    # onnxruntime of its range, as the recipe's [smoke] does.
    settings = replace(SMOKE, packages=(*SMOKE.packages, "onnxruntime-genai>=0.16"), genai=True,
                       onnxruntime_range=True)
    if hipdnn:
        # Route the umbrella to the hipDNN shim, itself pointed at the same real EP.
        settings = replace(
            SMOKE,
            env={**SMOKE.env, "AMDGPU_EP_PROFILE": "hipdnn",
                 "AMDGPU_HIPDNN_EP_LIBRARY": "{library:onnxruntime_ep_webgpu}"},
            expect_log=(r"^\[amdgpu-ep\] forwarded 1 factory from .*/libhipdnn-backend\.so$",
                        r"^\[hipdnn-backend\] forwarded 1 factory from .*/libonnxruntime_providers_webgpu\.so$"),
        )
    capfd.readouterr()
    assert run_smoke([result.wheel], settings) == 0
    output = smoke_lines(capfd)
    assert "PASS import onnxruntime_ep_amdgpu from " in output and "/venv/lib/" in output
    assert "PASS registered AMDGPUExecutionProvider from " in output
    assert "PASS libamdgpu-ep.so is loaded in this process" in output
    assert output.count("PASS log matches") == len(settings.expect_log)
    assert_device_outcome(output)
    assert "SMOKE PASS" in output and "FAIL" not in output
    if not hipdnn:
        assert_genai_outcome(output)
        assert_range_outcome(output, SETTINGS.onnxruntime, tmp_path / "probe")


def assert_range_outcome(output: str, spec: str, probe: Path) -> None:
    """The floor and the newest onnxruntime of the range on PyPI (1.24.1 and 1.32.0 when written), each registering
    the EP beside the wheel in a venv of its own."""
    floor, newest = ort_range_ends(spec, probe)
    for version in (floor, newest):
        assert f"PASS onnxruntime {version}: AMDGPUExecutionProvider registers, " in output, output
    assert f"ONNXRUNTIME RANGE PASS: onnxruntime{spec}" in output, output


def assert_genai_outcome(output: str) -> None:
    assert "PASS genai: onnxruntime-genai " in output and "tokenizer.json encodes the prompt as its bytes" in output
    assert re.search(r"^PASS genai: CPU provider generated \[(\d+, ){15}\d+\]$", output, re.MULTILINE), output
    # The wheel's own library, found by onnxruntime-genai through $AMDGPU_EP_PATH (set to the installed file).
    assert re.search(r"^PASS genai: \$AMDGPU_EP_PATH=.*/venv/lib/python3[^/]*/site-packages/onnxruntime_ep_amdgpu/"
                     r"[^ ]*libamdgpu-ep\.so was loaded by onnxruntime-genai's amdgpu provider$", output, re.MULTILINE)
    # Here (no GPU) the reason is said plainly; on a GPU machine the tokens must match instead.
    assert ("SKIP genai: generation on the amdgpu provider not run: no backend offers a device on this machine"
            in output or "the same tokens as the CPU provider" in output), output
    assert "GENAI PASS" in output


def test_two_sample_builds_are_identical(sample, tmp_path):
    libs, built, result = sample(False)
    again = build_wheel(SETTINGS, libs, sample_build_info(False), tmp_path / "again")
    assert sha256_file(again) == sha256_file(built)
    assert sha256_file(repair_wheel(again, tmp_path / "repaired").wheel) == sha256_file(result.wheel)


def run_checker(wheel: Path, target: Path, *args: str) -> subprocess.CompletedProcess:
    """The standalone checker against the wheel unpacked with pip --target, on this interpreter."""
    if not target.exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                        str(wheel)],
                       check=True)
    env = dict(os.environ, PYTHONPATH=str(target))
    return subprocess.run([sys.executable, str(CHECKER), "--package", "onnxruntime_ep_amdgpu", *args],
                          capture_output=True, text=True, env=env, cwd=target)


def test_checker_fails_when_the_backend_gives_no_factory(sample, tmp_path):
    _, _, result = sample(False)
    done = run_checker(result.wheel, tmp_path / "site", "--env", "AMDGPU_MIGRAPHX_EP_LIBRARY=/nonexistent/libep.so",
                       "--env", "AMDGPU_EP_VERBOSE=1", "--expect-log", r"^\[amdgpu-ep\] forwarded [1-9]")
    assert done.returncode == 1, done.stdout
    assert ("[migraphx-backend] EP library not found: looked at $AMDGPU_MIGRAPHX_EP_LIBRARY=/nonexistent/libep.so"
            in done.stdout)
    assert "FAIL log has no line matching '^\\\\[amdgpu-ep\\\\] forwarded [1-9]'" in done.stdout
    assert "SMOKE FAIL: 1 check(s) failed" in done.stdout


def test_checker_fails_on_a_broken_env_placeholder(sample, tmp_path):
    _, _, result = sample(False)
    done = run_checker(result.wheel, tmp_path / "site", "--env", "AMDGPU_MIGRAPHX_EP_LIBRARY={library:no_such_ep_pkg}")
    assert done.returncode == 1
    assert ("FAIL env AMDGPU_MIGRAPHX_EP_LIBRARY: cannot resolve '{library:no_such_ep_pkg}': ModuleNotFoundError"
            in done.stdout)


def test_cli_smoke_require_gpu_fails_without_a_gpu_device(sample, tmp_path):
    """The path the GPU run takes (offline machine: --inherit-site-packages), with --require-gpu."""
    _, _, result = sample(False)
    cmd = [sys.executable, "-m", "toolkit", "smoke", str(result.wheel), "--require-gpu", "--inherit-site-packages",
           "--no-index", "--env", "AMDGPU_MIGRAPHX_EP_LIBRARY={library:onnxruntime_ep_webgpu}",
           "--env", "AMDGPU_EP_VERBOSE=1",
           "--keep", str(tmp_path / "smoke")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    gpu_here = "matches the CPU EP" in done.stdout
    if gpu_here:
        assert done.returncode == 0, done.stdout
    else:
        assert done.returncode == 1, done.stdout + done.stderr
        assert ("FAIL device checks required (--require-gpu) but no EP device of type GPU came from "
                "['AMDGPUExecutionProvider']" in done.stdout)
        assert "SMOKE FAIL" in done.stdout
    # The wheel under test was installed into the fresh venv, not found beside the toolkit.
    assert list((tmp_path / "smoke" / "venv").glob("lib/python3*/site-packages/onnxruntime_ep_amdgpu/libamdgpu-ep.so"))
