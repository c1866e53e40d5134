"""The sample's wheel where users already are, on this machine (no GPU): in fresh venvs beside each ONNX Runtime
flavour from PyPI. It declares no ONNX Runtime, so it keeps the one a venv has: beside AMD's onnxruntime-migraphx
no `onnxruntime` distribution appears and the MIGraphX EP stays, and the sample's EP registers with that ORT; beside
onnxruntime-rocm 1.22 (ORT API 22, below the plugin EP API) the self-check names the ORT it needs and never
registers; beside the newest onnxruntime-genai the guide's generation snippet falls back to the CPU instead of
crashing (beside the lowest and the newest onnxruntime in range: tests/wheel/test_guide_snippets.py). PyPI's
packages come from the session's wheelhouse (downloaded once)."""

from __future__ import annotations

import pytest

from tests.support.flavours import installed
from tests.support.selfcheck_support import (
    guide_snippets,
    run_python,
    run_selfcheck,
    verdict,
    write_model,
)
from tests.support.tools import ROOT
from tests.support.wheel_support import sample_build_info
from toolkit.recipe.wheel import WheelSettings
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml
from toolkit.wheel.build import build_wheel

RECIPE = ROOT / "recipes" / "amdgpu-ep.toml"
MIGRAPHX, ROCM = "onnxruntime-migraphx==1.27.1", "onnxruntime-rocm==1.22.2.post3"
PROVIDERS = "import onnxruntime as ort; print(ort.get_available_providers())"
NO_GPU = "not ready: no AMD GPU here (render nodes: "
# What a GPU-less machine can do, as the self-check says it (the sample, which links no ROCm).
NO_GPU_TODO = ("What to do: on this machine models run on ONNX Runtime's CPUExecutionProvider (a session without this "
               "EP's devices); to run on the GPU, use a machine with an AMD GPU and the amdgpu kernel driver")
NEEDS = ("not ready: onnxruntime-rocm 1.22.2.post3 is outside the range this EP supports (>=1.24, the plugin EP API), "
         "so it was not registered. What to do: replace it: pip uninstall onnxruntime-rocm, then pip install "
         "'onnxruntime>=1.24' (the CPU build) or pip install 'onnxruntime-migraphx>=1.24' (AMD's build with its "
         "MIGraphX EP, for ROCm 7)")


@pytest.fixture(scope="module")
def sample_wheel(sample_libs, tmp_path_factory):
    """The sample's wheel as its recipe names it (onnxruntime-ep-amdgpu-sample), from the session's sample build."""
    settings = read(WheelSettings, load_toml(RECIPE).table("wheel"))
    return build_wheel(settings, sample_libs(), sample_build_info(False), tmp_path_factory.mktemp("flavour-dist"))


def test_the_wheel_declares_no_onnxruntime(sample_wheel):
    import zipfile

    with zipfile.ZipFile(sample_wheel) as archive:
        metadata = archive.read("onnxruntime_ep_amdgpu_sample-0.1.0.dist-info/METADATA").decode()
    assert "Requires-Dist" not in metadata and "Needs ONNX Runtime `>=1.24`" in metadata


def test_beside_onnxruntime_migraphx_amds_ort_stays_and_registers_the_sample(sample_wheel, wheelhouse, tmp_path):
    wheelhouse.fetch(MIGRAPHX)
    python = wheelhouse.venv(tmp_path / "venv", MIGRAPHX, sample_wheel)
    names = installed(python)
    assert "onnxruntime" not in names and names["onnxruntime-migraphx"] == "1.27.1", names
    assert names["onnxruntime-ep-amdgpu-sample"] == "0.1.0"
    assert run_python(python, PROVIDERS).stdout.strip() == "['MIGraphXExecutionProvider', 'CPUExecutionProvider']"
    done = run_selfcheck(python, cwd=tmp_path)
    print(done.stdout)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "onnxruntime: onnxruntime-migraphx 1.27.1; supported >=1.24: yes" in done.stdout
    assert "ORT registration of AMDGPUExecutionProvider: registered, 0 device(s): none" in done.stdout
    # The backend's own lines are facts of the report, not noise on stderr.
    assert "  the EP said: [migraphx-backend] EP library not found: " in done.stdout and done.stderr == ""
    assert verdict(done).startswith(NO_GPU) and NO_GPU_TODO in verdict(done), verdict(done)
    # check() where the EP is registered already in the process: that registration's answer, not ORT's refusal.
    code = ("import onnxruntime as ort, onnxruntime_ep_amdgpu as ep\n"
            "ort.register_execution_provider_library(ep.get_ep_name(), ep.get_library_path())\n"
            "f = ep.check(); print(f['registration']['already_registered'], f['missing'].split(' (')[0])\n")
    again = run_python(python, code, cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "True no AMD GPU here\n"), again.stdout + again.stderr
    # The guide's register-and-run snippet as written: registers with AMD's ORT, runs on the CPU, MIGraphX EP stays.
    write_model(tmp_path / "model.onnx")
    run = run_python(python, guide_snippets("python")[1] + PROVIDERS + "\n", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["[]", "AMDGPUExecutionProvider offers no device here; running on the CPU",
                                       "['CPUExecutionProvider']",
                                       "['MIGraphXExecutionProvider', 'CPUExecutionProvider']"], run.stdout


def test_beside_onnxruntime_rocm_1_22_it_names_the_onnxruntime_it_needs(sample_wheel, wheelhouse, tmp_path):
    # onnxruntime-rocm's metadata omits numpy, which its module imports: a user's environment has it anyway.
    wheelhouse.fetch(ROCM, "numpy")
    python = wheelhouse.venv(tmp_path / "venv", ROCM, "numpy", sample_wheel)
    assert "onnxruntime" not in installed(python)
    done = run_selfcheck(python, cwd=tmp_path)
    print(done.stdout)
    assert (done.returncode, verdict(done), done.stderr) == (1, NEEDS, ""), done.stdout + done.stderr
    assert ("ORT registration of AMDGPUExecutionProvider: not tried: onnxruntime 1.22.2.post3 is installed; the EP "
            "needs onnxruntime>=1.24") in done.stdout
    quiet = run_selfcheck(python, "-q", cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout) == (1, NEEDS + "\n")
    # check() from Python: the same, and the process lives on (no registration with an ORT that lacks the API).
    code = "import onnxruntime_ep_amdgpu as ep; f = ep.check(); print(f['ready'], f['registration']['attempted'])"
    assert run_python(python, code, cwd=tmp_path).stdout == "False False\n"
    # The guide's register snippet stops with one message naming the ORT to install, no traceback, no crash.
    write_model(tmp_path / "model.onnx")
    guided = run_python(python, guide_snippets("python")[1], cwd=tmp_path)
    assert guided.returncode == 1 and "Traceback" not in guided.stderr, guided.stderr
    assert guided.stderr.strip().splitlines()[-1] == NEEDS.removeprefix("not ready: ")


def test_beside_the_newest_onnxruntime_genai_the_guides_snippet_generates_on_the_cpu(sample_wheel, wheelhouse,
                                                                                      tmp_path):
    from toolkit.smoke.inside import smoke_genai

    wheelhouse.fetch("onnxruntime-genai", "onnx")
    python = wheelhouse.venv(tmp_path / "venv", "onnxruntime-genai", "onnx", sample_wheel)
    names = installed(python)
    print(f"onnxruntime-genai {names['onnxruntime-genai']} beside onnxruntime {names['onnxruntime']}")
    model = tmp_path / "model"
    model.mkdir()
    writer = (f"import sys; sys.path.insert(0, {str(smoke_genai.__file__.rsplit('/', 1)[0])!r})\n"
              f"import smoke_genai as g\n"
              f"g.write_model({str(model)!r}, g.MAX_LENGTH); g.write_config({str(model)!r}, g.MAX_LENGTH); "
              f"g.write_tokenizer({str(model)!r})\n")
    made = run_python(python, writer, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    snippet = guide_snippets("python")[2]
    assert 'og.Config("path/to/model")' in snippet
    done = run_python(python, snippet.replace("path/to/model", str(model)), cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith("AMDGPUExecutionProvider cannot run here, generating on the CPU: no AMD GPU here (")
