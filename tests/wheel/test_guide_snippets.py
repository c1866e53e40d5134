"""docs/guides/using-the-wheel.md's snippets run as written against the built sample wheel, in a fresh venv with
PyPI's onnxruntime at the floor and the newest of the wheel's range: here (no GPU) the self-check exits 1 naming
the missing GPU, and "register, choose a device, run" takes its zero-devices branch and runs on the CPU."""

from __future__ import annotations

import pytest

from tests.support.selfcheck_support import (
    guide_snippets,
    ort_range_ends,
    run_python,
    run_selfcheck,
    selfcheck_commands,
    venv_with,
    write_model,
)
from tests.support.wheel_support import SETTINGS, sample_build_info
from toolkit.wheel.build import build_wheel

pytestmark = pytest.mark.network  # PyPI's onnxruntime


def test_the_guide_has_the_snippets_this_test_runs():
    python = guide_snippets("python")
    # The check, register-and-run, and onnxruntime-genai's (that one needs a generative model: the smoke's genai
    # step runs the same provider, toolkit/wheel/smoke_genai.py).
    assert len(python) == 3 and "onnxruntime_genai" in python[2]
    assert selfcheck_commands() == ["python -m onnxruntime_ep_amdgpu", "python -m onnxruntime_ep_amdgpu --json"]


@pytest.fixture(scope="module")
def sample_wheel(sample_libs, tmp_path_factory):
    return build_wheel(SETTINGS, sample_libs(), sample_build_info(False), tmp_path_factory.mktemp("dist"))


def test_guide_snippets_run_with_the_sample_wheel_without_a_gpu(sample_wheel, tmp_path):
    for version in ort_range_ends(SETTINGS.onnxruntime, tmp_path / "probe"):
        python = venv_with(tmp_path / f"venv-{version}", sample_wheel, version)
        work = tmp_path / f"run-{version}"
        work.mkdir()
        write_model(work / "model.onnx")
        for command in selfcheck_commands():
            done = run_selfcheck(python, *command.split()[3:], cwd=work)  # python -m PACKAGE ARGS, as written
            assert done.returncode == 1, (command, done.stdout, done.stderr)
            assert '"ready": false' in done.stdout or "not ready: no AMD GPU here (" in done.stdout, done.stdout
        check, register = guide_snippets("python")[:2]
        done = run_python(python, check, cwd=work)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[0].startswith("False no AMD GPU here ("), done.stdout
        assert "'rocm_variant': None" in done.stdout and "[]" in done.stdout.splitlines()[1]
        done = run_python(python, register, cwd=work)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["[]", "AMDGPUExecutionProvider offers no device here; running on the CPU",
                                            "['CPUExecutionProvider']"], done.stdout
