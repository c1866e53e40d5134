"""Run by a Python with onnxruntime (the build root's Debian 1.27.1): register hip-ep's libhipgpu.so under its EP
name (hipgpu), take its CPU device (MORPHIZEN_EP_ENABLE_CPU_DEVICE=1 in the environment), create a session on it with
CPU fallback disabled (so creating it proves the EP took every node) and run it once. Prints one JSON line: the EP
devices, the session's providers, the output's shape. The mock runtime computes nothing, so no value is printed or
compared. The JSON also lists every LLVM library mapped into the process when the sessions have run.

    [HIPEP_PRELOAD=SONAME:SONAME...] python3 hip_ep_session.py LIBRARY MODEL [MODEL ...]

HIPEP_PRELOAD names libraries loaded first, with RTLD_GLOBAL, as another part of the process would have them (ROCm's
comgr and the system's libLLVM): their symbols come before the EP's in every lookup.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

import numpy as np
import onnxruntime as ort

# hip-ep's EP name (recipes/hip-ep.toml's ep_name, what hip-ep's own docs register it as): ORT names the devices after
# the name the library was registered under.
EP_NAME = "hipgpu"


def mapped_llvm() -> list[str]:
    with open("/proc/self/maps", encoding="utf-8") as maps:
        return sorted({line.split()[-1] for line in maps if "/libLLVM" in line})


def main(library: str, models: list[str]) -> None:
    for name in filter(None, os.environ.get("HIPEP_PRELOAD", "").split(":")):
        ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
    ort.register_execution_provider_library(EP_NAME, library)
    devices = [d for d in ort.get_ep_devices() if d.ep_name == EP_NAME]
    report = {"ort": ort.__version__,
              "devices": [{"ep": d.ep_name, "vendor": d.ep_vendor, "type": str(d.device.type)} for d in devices],
              "sessions": []}
    for model in models:
        options = ort.SessionOptions()
        options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        options.add_provider_for_devices(devices, {})
        session = ort.InferenceSession(model, sess_options=options)
        feeds = {i.name: np.ones([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
                 for i in session.get_inputs()}
        outputs = session.run(None, feeds)
        report["sessions"].append({"model": model, "providers": session.get_providers(),
                                   "outputs": [list(o.shape) for o in outputs]})
    report["llvm"] = mapped_llvm()
    print("HIPEP " + json.dumps(report))
    ort.unregister_execution_provider_library(EP_NAME)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
