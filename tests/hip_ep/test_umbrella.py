"""The umbrella's -hipdnn wheel and the hip-ep wheel installed side by side, as a user gets them: the umbrella's hip
backend (libhip-backend.so, a bare-name dlopen of libhipgpu.so) loads hip-ep's library from the sibling package folder
through its RUNPATH $ORIGIN/../onnxruntime_ep_hip, with no LD_LIBRARY_PATH, and the umbrella's self-check finds
it there. Shown with the loader's own trace (LD_DEBUG=files): there is no AMD GPU here for the umbrella to route to.
The umbrella is built exactly as tests/real_umbrella builds it in this root, so that build is shared."""

from __future__ import annotations

import re

from tests.support.hip_ep_support import ROOT_NAME, toolkit
from tests.support.real_umbrella_support import ROOTS, wheel_build
from toolkit.buildroot import run_in_root

PROBE = ("import onnxruntime as ort, onnxruntime_ep_amdgpu as u\n"
         "ort.register_execution_provider_library('AMDGPUExecutionProvider', u.get_library_path())\n"
         "print('registered', flush=True)\n")


def test_the_umbrellas_hip_backend_loads_libhipgpu_from_the_hip_ep_wheel_beside_it(hipep, tmp_path):
    _, build = ROOTS["rocm7"]
    assert ROOTS["rocm7"][0] == ROOT_NAME
    built = toolkit(hipep.root, hipep.python, wheel_build(build))
    assert built.returncode == 0, (built.stdout + built.stderr)[-4000:]
    [umbrella] = (build / "umbrella-ep-real" / "release" / "wheelhouse").glob("*.whl")
    [hip] = (hipep.ws / "wheelhouse").glob("*.whl")
    (tmp_path / "probe.py").write_text(PROBE)
    venv = tmp_path / "venv"
    script = (f"python3 -m venv --system-site-packages {venv} && {venv}/bin/python -m pip install -q --no-index "
              f"--no-deps {umbrella} {hip} && LD_DEBUG=files {venv}/bin/python {tmp_path}/probe.py && "
              f"{venv}/bin/python -m onnxruntime_ep_amdgpu; true")
    proc = run_in_root(hipep.root, ["sh", "-c", script], binds=[tmp_path, umbrella.parent, hip.parent],
                       network=False, check=False, capture=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert "registered" in proc.stdout, out[-4000:]
    site = f"{venv}/lib/python3"
    loaded = re.search(r"file=libhipgpu\.so \[0\];\s+dynamically loaded by (\S+)", out)
    assert loaded and loaded.group(1).endswith("/onnxruntime_ep_amdgpu/libhip-backend.so"), out[-4000:]
    opened = re.search(r"opening file=(\S+/libhipgpu\.so)", out)
    assert opened and opened.group(1).startswith(site) and "/onnxruntime_ep_hip/libhipgpu.so" in opened.group(1)
    assert re.search(r"libhipgpu\.so \(loaded at run time by libhip-backend\.so\): found \S+/onnxruntime_ep_hip/"
                     r"libhipgpu\.so \(RUNPATH\)", proc.stdout), proc.stdout[-3000:]
