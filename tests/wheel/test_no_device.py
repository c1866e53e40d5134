"""A wheel whose EP may offer no device says why beside "0 device(s)", and what turns one on (the recipe's
[wheel.no_device]): hip-ep offers AMD GPUs only, its CPU device off unless MORPHIZEN_EP_ENABLE_CPU_DEVICE=1. Built
from hip-ep's own [wheel] with stand-in libraries (a plugin EP that registers and offers nothing), then its
self-check run for real beside this Python's onnxruntime."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.doc_commands import readme_commands
from tests.support.tools import ROOT
from tests.support.wheel_support import build_c_library
from toolkit.recipe.load import load_recipe
from toolkit.wheel.build import build_wheel

WHY = ("  why no device: hip-ep offers AMD GPUs only, and its CPU device is off by default; "
       "MORPHIZEN_EP_ENABLE_CPU_DEVICE=1 turns on its CPU device, which runs a session without a GPU (as the tests do)")


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    """hip-ep's real-runtime wheel (mock off: no test build) of stand-in libraries, unpacked."""
    work = tmp_path_factory.mktemp("hipgpu")
    settings = load_recipe(ROOT / "recipes" / "hip-ep.toml").wheel
    assert settings is not None and settings.no_device is not None
    for c in settings.components_for(frozenset()):
        build_c_library(work / "lib" / c.filename)
    wheel = build_wheel(settings, work / "lib", {"source_revision": "x", "features": {"mock": False}}, work / "dist")
    zipfile.ZipFile(wheel).extractall(work / "site")
    return work / "site"


def selfcheck(site: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "MORPHIZEN_EP_ENABLE_CPU_DEVICE"}
    return subprocess.run([sys.executable, "-m", "onnxruntime_ep_hip", *args], capture_output=True, text=True,
                          env={**clean, "PYTHONPATH": str(site), **env}, cwd=site, timeout=300)


def test_zero_devices_say_why_and_what_turns_one_on(unpacked):
    done = selfcheck(unpacked)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "ORT registration of hipgpu: registered, 0 device(s): none\n" + WHY + " (not set here)\n" in out
    facts = json.loads(selfcheck(unpacked, "--json").stdout)
    if not facts["gpus"]["amd"]:   # no AMD GPU here: the verdict says how to run a session anyway
        assert out.splitlines()[-1].startswith(
            "not ready: no AMD GPU here (render nodes: ") and \
            "hipgpu registers and offers zero devices (hip-ep offers AMD GPUs only, and its CPU device is off by " \
            "default). What to do: to run a session on hipgpu here, set MORPHIZEN_EP_ENABLE_CPU_DEVICE=1: it turns " \
            "on its CPU device, which runs a session without a GPU (as the tests do); otherwise on this machine " \
            "models run on ONNX Runtime's CPUExecutionProvider" in out.splitlines()[-1]


def test_with_the_variable_set_it_says_it_is_set(unpacked):
    # The stand-in offers nothing whatever is set: the report says the variable is set, so the cause is elsewhere.
    out = selfcheck(unpacked, MORPHIZEN_EP_ENABLE_CPU_DEVICE="1").stdout
    assert WHY + " (set here, yet it offers none)\n" in out


def test_the_guide_runs_the_self_check_and_a_session_with_what_turns_a_device_on():
    """building-hip-ep.md shows a session as the tests run one: every line that runs the self-check or the session
    sets each variable of the recipe's [wheel.no_device], and the Python session says to."""
    settings = load_recipe(ROOT / "recipes" / "hip-ep.toml").wheel
    assert settings is not None and settings.no_device is not None
    assignments = [f"{name}={value}" for name, value in settings.no_device.env]
    guide = ROOT / "docs" / "guides" / "building-hip-ep.md"
    lines = [s.text for s in readme_commands(guide) if s.typed and "onnxruntime_ep_hip" in s.text]
    assert lines, "the guide runs no self-check or session of the HIP EP"
    for line in lines:
        for command in line.split("&&"):
            if "-m onnxruntime_ep_hip" in command or "hip_ep_session.py" in command:
                assert all(a in command.split() for a in assignments), command
    text = guide.read_text(encoding="utf-8")
    session = text[text.index("```python", text.index("### A session on the HIP EP")):]
    assert all(a in session[:session.index("```", 9)] for a in assignments)
