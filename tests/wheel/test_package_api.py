"""The import package's API edges, in the installed sample wheel: get_library_path() raises FileNotFoundError with
the reinstall to run when the library is gone; register_execution_provider_library() registers under the EP name
(ORT then unregisters that name) and returns the devices of that name, again when called twice, with PyPI's
onnxruntime at both ends of the wheel's range."""

from __future__ import annotations

import os

import pytest

from tests.support.selfcheck_support import ort_range_ends, run_python, venv_with
from tests.support.wheel_support import SETTINGS, sample_build_info
from toolkit.wheel.build import build_wheel

PACKAGE = SETTINGS.import_package


@pytest.fixture(scope="module")
def sample_wheel(sample_libs, tmp_path_factory):
    return build_wheel(SETTINGS, sample_libs(), sample_build_info(False), tmp_path_factory.mktemp("dist"))


def test_a_missing_library_is_a_file_not_found_error_saying_to_reinstall(sample_wheel, tmp_path):
    python = venv_with(tmp_path / "venv", sample_wheel)
    found = run_python(python, f"import {PACKAGE} as ep, os; p = ep.get_library_path(); print(p, os.path.isfile(p))")
    assert found.returncode == 0, found.stderr
    path, exists = found.stdout.split()
    assert exists == "True" and path.endswith("/libamdgpu-ep.so")
    os.unlink(path)
    gone = run_python(python, f"import {PACKAGE} as ep\ntry:\n    ep.get_library_path()\n"
                              "except FileNotFoundError as exc:\n    print(exc)")
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.strip() == (f"{SETTINGS.distribution} {SETTINGS.version}: its EP library {path} is missing; "
                                   f"reinstall the package: pip install --force-reinstall "
                                   f"{SETTINGS.distribution}=={SETTINGS.version}")


REGISTER = f"""
import onnxruntime as ort
import {PACKAGE} as ep

devices = ep.register_execution_provider_library()
again = ep.register_execution_provider_library(ort)
mine = [d for d in ort.get_ep_devices() if d.ep_name == ep.get_ep_name()]
print(len(devices), len(again), len(mine))
ort.unregister_execution_provider_library(ep.get_ep_name())   # raises unless registered under the EP name
try:
    ort.unregister_execution_provider_library(ep.get_ep_name())
except Exception:
    print("unregistered")
"""


@pytest.mark.network  # PyPI's onnxruntime
def test_the_helper_registers_under_the_ep_name_and_returns_its_devices(sample_wheel, wheelhouse, tmp_path):
    versions = ort_range_ends(SETTINGS.onnxruntime, tmp_path / "probe")
    for version in versions:
        wheelhouse.fetch(f"onnxruntime=={version}")
        python = wheelhouse.venv(tmp_path / f"venv-{version}", f"onnxruntime=={version}", sample_wheel)
        done = run_python(python, REGISTER, cwd=tmp_path)
        assert done.returncode == 0, (version, done.stderr)
        counts, said = done.stdout.splitlines()
        # No GPU here: the sample's backend offers no device, and each count is the same zero.
        first, second, mine = counts.split()
        assert first == second == mine, (version, done.stdout)
        assert said == "unregistered", (version, done.stdout)
