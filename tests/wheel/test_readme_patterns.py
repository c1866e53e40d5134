"""NVIDIA's and OpenVINO's README patterns, run against our wheel in a fresh venv with PyPI's onnxruntime (the floor
of the wheel's range and the newest): register the library, keep the devices whose `ep_name` is `get_ep_name()`, add
them to a session. Without a GPU the sample's backends offer nothing of their own, so its MIGraphX backend forwards
to PyPI's OpenVINO plugin EP (AMDGPU_MIGRAPHX_EP_LIBRARY), which offers this machine's CPU: the umbrella then offers
that device as its own, named as ORT names it, after the name the library was registered under, and routes a session
on it to that backend.

NVIDIA's pattern registers under `get_ep_name()` and gets the device; OpenVINO's registers under a name of the
user's choosing, and its filter finds none (the device is there, under that name). The wheel's helper,
`register_execution_provider_library()`, registers under the EP name and returns the devices, which makes the
pattern unnecessary; docs/guides/using-the-wheel.md says so.

OpenVINO's factory offers Intel's devices alone (vendor id 0x8086): on a machine with another vendor's CPU it offers
none, and neither does the umbrella, which offers no device its backend does not. The test asks OpenVINO first and,
on such a machine, shows that instead (each pattern runs and keeps nothing), saying so in its output."""

from __future__ import annotations

import json

import pytest

from tests.support.selfcheck_support import ort_range_ends, run_python, write_model
from tests.support.wheel_support import SETTINGS, sample_build_info
from toolkit.wheel.build import build_wheel

OPENVINO = "onnxruntime-ep-openvino==1.8.1"

# The sample's MIGraphX backend forwards to the plugin EP this names: PyPI's OpenVINO EP, which offers the CPU.
SETUP = """
import json, os
import onnxruntime as ort
import onnxruntime_ep_openvino
os.environ["AMDGPU_MIGRAPHX_EP_LIBRARY"] = onnxruntime_ep_openvino.get_library_path()
import onnxruntime_ep_amdgpu as ep
"""

# Whether OpenVINO's factory, registered alone, offers a device here (it takes Intel's devices alone).
OPENVINO_ALONE = """
import json
import onnxruntime as ort
import onnxruntime_ep_openvino as ov
ort.register_execution_provider_library("OpenVINOExecutionProvider", ov.get_library_path())
print(json.dumps(any(d.ep_name == "OpenVINOExecutionProvider" for d in ort.get_ep_devices())))
"""

# What each run reports: the devices the pattern kept, every EP name ORT lists, the session's providers.
REPORT = """
names = sorted({d.ep_name for d in ort.get_ep_devices()})
providers = None
if devices:
    options = ort.SessionOptions()
    options.add_provider_for_devices(devices, {})
    providers = ort.InferenceSession("model.onnx", sess_options=options).get_providers()
print(json.dumps({"kept": len(devices), "names": names, "providers": providers}))
"""

PATTERNS = {
    # NVIDIA's README: register under the EP name, keep the devices of that name.
    "nvidia": """
ort.register_execution_provider_library(ep.get_ep_name(), ep.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == ep.get_ep_name()]
""",
    # OpenVINO's README: register under a name of the user's choosing, keep the devices named as get_ep_name().
    "openvino": """
registration_name = "my_amdgpu_ep"
ort.register_execution_provider_library(registration_name, ep.get_library_path())
ep_name = ep.get_ep_name()
devices = [d for d in ort.get_ep_devices() if d.ep_name == ep_name]
""",
    # OpenVINO's, with the registration name the docs give: the EP name.
    "openvino, registered as get_ep_name()": """
registration_name = ep.get_ep_name()
ort.register_execution_provider_library(registration_name, ep.get_library_path())
ep_name = ep.get_ep_name()
devices = [d for d in ort.get_ep_devices() if d.ep_name == ep_name]
""",
    # The wheel's helper: no name to choose, the devices returned.
    "helper": """
devices = ep.register_execution_provider_library()
""",
}


@pytest.fixture(scope="module")
def sample_wheel(sample_libs, tmp_path_factory):
    return build_wheel(SETTINGS, sample_libs(), sample_build_info(False), tmp_path_factory.mktemp("dist"))


@pytest.mark.network  # PyPI's onnxruntime and OpenVINO EP
def test_the_readme_patterns_get_the_devices_registered_under_the_ep_name(sample_wheel, wheelhouse, tmp_path):
    write_model(tmp_path / "model.onnx")
    for version in ort_range_ends(SETTINGS.onnxruntime, tmp_path / "probe"):
        wheelhouse.fetch(f"onnxruntime=={version}", OPENVINO)
        python = wheelhouse.venv(tmp_path / f"venv-{version}", f"onnxruntime=={version}", OPENVINO, sample_wheel)
        offered = run_python(python, OPENVINO_ALONE, cwd=tmp_path)
        assert offered.returncode == 0, (version, offered.stderr)
        intel = json.loads(offered.stdout.splitlines()[-1])
        seen = {}
        for name, pattern in PATTERNS.items():
            done = run_python(python, SETUP + pattern + REPORT, cwd=tmp_path)
            assert done.returncode == 0, (version, name, done.stderr)
            seen[name] = json.loads(done.stdout.splitlines()[-1])
        amd = "AMDGPUExecutionProvider"
        if not intel:
            print(f"onnxruntime {version}: OpenVINO offers no device on this machine's CPU (not Intel's): the umbrella "
                  "must offer none either")
            assert all(s["kept"] == 0 and amd not in s["names"] for s in seen.values()), (version, seen)
            continue
        for name in ("nvidia", "openvino, registered as get_ep_name()", "helper"):
            assert seen[name]["kept"] >= 1 and amd in seen[name]["names"], (version, name, seen[name])
            # The session runs on the EP the umbrella routed it to: the backend's, here OpenVINO's.
            assert seen[name]["providers"] == ["OpenVINOExecutionProvider", "CPUExecutionProvider"], \
                (version, name, seen[name])
        # Registered under a name of the user's own, the devices carry that name: the filter on the EP name keeps
        # none of them.
        assert seen["openvino"]["kept"] == 0 and "my_amdgpu_ep" in seen["openvino"]["names"], (version, seen)
        assert amd not in seen["openvino"]["names"], (version, seen)
