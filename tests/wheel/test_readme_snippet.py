"""The wheel's long description (the index page) is one a user can act on: the registration snippet first, what the
machine needs (the ROCm major, the ORT floor), the self-check command, then the build facts; the snippet, taken from
the built sample wheel's METADATA, runs exactly as printed in a fresh venv with PyPI's onnxruntime (the floor and the
newest), beside a model.onnx, and makes a session."""

from __future__ import annotations

import re
import subprocess
import zipfile

import onnx
import pytest
from onnx import TensorProto, helper

from tests.support.selfcheck_support import clean_env, ort_range_ends
from tests.support.wheel_support import SETTINGS, sample_build_info
from toolkit.wheel.build import build_wheel
from toolkit.wheel.wheelfile import read_headers

PACKAGE = SETTINGS.import_package
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


@pytest.fixture(scope="module")
def sample_wheel(sample_libs, tmp_path_factory):
    return build_wheel(SETTINGS, sample_libs(), sample_build_info(False), tmp_path_factory.mktemp("dist"))


def page(wheel) -> str:
    with zipfile.ZipFile(wheel) as archive:
        headers = read_headers(archive, "METADATA")
    assert headers is not None
    return str(headers.get_payload())


def test_the_page_says_how_to_use_it_first_and_the_build_facts_last(sample_wheel):
    text = page(sample_wheel)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## Use it", "## What it needs", "## Check a machine", "## Build",
                        "## Libraries, and what each needs at run time"]
    snippet = _PYTHON_BLOCK.search(text)
    assert snippet and text.index("## Use it") < snippet.start() < text.index("## What it needs")
    assert f"import {PACKAGE} as ep" in snippet.group(1)
    assert "ep.register_execution_provider_library()" in snippet.group(1)
    assert "- Needs ONNX Runtime `>=1.24` (the plugin EP API), from whichever distribution" in text
    # The sample links no ROCm library, and says so instead of naming a major.
    assert "- No ROCm library: the libraries link none" in text
    assert f"```sh\npython -m {PACKAGE}\n```" in text


def write_model(path) -> None:
    """A one-node model (Relu) made with onnx in the toolkit's environment; the snippet's venv has onnxruntime only."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what every ORT of the wheel's range reads
    onnx.save(model, str(path))


@pytest.mark.network  # PyPI's onnxruntime
def test_the_snippet_runs_as_printed_with_pypis_onnxruntime(sample_wheel, wheelhouse, tmp_path):
    snippet = _PYTHON_BLOCK.search(page(sample_wheel))
    assert snippet
    script = tmp_path / "snippet.py"
    script.write_text(snippet.group(1))
    write_model(tmp_path / "model.onnx")
    for version in ort_range_ends(SETTINGS.onnxruntime, tmp_path / "probe"):
        wheelhouse.fetch(f"onnxruntime=={version}")
        python = wheelhouse.venv(tmp_path / f"venv-{version}", f"onnxruntime=={version}", sample_wheel)
        done = subprocess.run([str(python), "-I", str(script)], capture_output=True, text=True, cwd=tmp_path,
                              env=clean_env(), timeout=300)
        assert done.returncode == 0, (version, done.stderr)
        # No GPU here: no device, and the session falls back to ORT's CPU EP.
        assert done.stdout.strip() == "AMDGPUExecutionProvider 0 ['CPUExecutionProvider']", (version, done.stdout)
