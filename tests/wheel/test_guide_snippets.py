"""docs/guides/using-the-wheel.md's snippets run as written against the built sample wheel, in a fresh venv with
PyPI's onnxruntime at the floor and the newest of the wheel's range (from the session's wheelhouse): there the EP
registers, here (no GPU) the self-check exits 1 naming the missing GPU, and "register, choose a device, run" takes
its zero-devices branch and runs on the CPU. The guide's example verdict is the one the self-check prints."""

from __future__ import annotations

import pytest

from tests.support.flavours import installed
from tests.support.selfcheck_support import (
    BOOKWORM,
    guide_snippets,
    hip_not_found,
    ort_range_ends,
    run_python,
    run_selfcheck,
    selfcheck_commands,
    write_model,
)
from tests.support.wheel_support import SETTINGS, sample_build_info
from toolkit.wheel.build import build_wheel

pytestmark = pytest.mark.network  # PyPI's onnxruntime


def test_the_guide_has_the_snippets_this_test_runs():
    python = guide_snippets("python")
    # The check, register-and-run, and onnxruntime-genai's (that one needs a generative model: the smoke's genai
    # step runs the same provider, toolkit/smoke/inside/smoke_genai.py).
    assert len(python) == 3 and "onnxruntime_genai" in python[2]
    assert selfcheck_commands() == ["python -m onnxruntime_ep_amdgpu", "python -m onnxruntime_ep_amdgpu --json"]


@pytest.fixture(scope="module")
def sample_wheel(sample_libs, tmp_path_factory):
    return build_wheel(SETTINGS, sample_libs(), sample_build_info(False), tmp_path_factory.mktemp("dist"))


def test_the_guides_example_verdict_is_the_self_checks():
    [example] = guide_snippets("text")
    assert example.strip() == hip_not_found("7", BOOKWORM)   # the guide's example machine: Debian 12


def test_guide_snippets_run_with_the_sample_wheel_without_a_gpu(sample_wheel, wheelhouse, tmp_path):
    versions = ort_range_ends(SETTINGS.onnxruntime, tmp_path / "probe")
    assert versions[0].startswith("1.24.") and len(versions) == 2, versions
    for version in versions:
        wheelhouse.fetch(f"onnxruntime=={version}")
        python = wheelhouse.venv(tmp_path / f"venv-{version}", f"onnxruntime=={version}", sample_wheel)
        assert installed(python)["onnxruntime"] == version
        work = tmp_path / f"run-{version}"
        work.mkdir()
        write_model(work / "model.onnx")
        for command in selfcheck_commands():
            done = run_selfcheck(python, *command.split()[3:], cwd=work)  # python -m PACKAGE ARGS, as written
            assert done.returncode == 1, (command, done.stdout, done.stderr)
            assert '"ready": false' in done.stdout or "not ready: no AMD GPU here (" in done.stdout, done.stdout
            if "--json" not in command:
                assert f"onnxruntime: onnxruntime {version}; supported >=1.24: yes" in done.stdout
                assert "ORT registration of AMDGPUExecutionProvider: registered, 0 device(s)" in done.stdout
        check, register = guide_snippets("python")[:2]
        done = run_python(python, check, cwd=work)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[0].startswith("False no AMD GPU here ("), done.stdout
        assert "'rocm_variant': None" in done.stdout and "[]" in done.stdout.splitlines()[1]
        done = run_python(python, register, cwd=work)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["[]", "AMDGPUExecutionProvider offers no device here; running on the CPU",
                                            "['CPUExecutionProvider']"], done.stdout
