"""Smoke check of the real umbrella wheel, run inside the build root by a fresh venv's python (the wheel
installed beside onnxruntime). Prints one JSON object with what it saw; the test judges it.

No onnx package is needed: the one-node model (Identity, float[2]) is written in protobuf's wire format here.
"""

from __future__ import annotations

import json
import os
import sys


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, value) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def identity_model() -> bytes:
    def value_info(name: str) -> bytes:
        dim = _field(1, _field(1, 2))  # shape.dim { dim_value: 2 }
        tensor = _field(1, 1) + _field(2, dim)  # elem_type FLOAT, shape
        return _field(1, name) + _field(2, _field(1, tensor))
    node = _field(1, "x") + _field(2, "y") + _field(4, "Identity")
    graph = _field(1, node) + _field(2, "g") + _field(11, value_info("x")) + _field(12, value_info("y"))
    return _field(1, 8) + _field(7, graph) + _field(8, _field(2, 13))  # ir_version 8, opset 13


def main() -> int:
    import numpy as np
    import onnxruntime as ort
    import onnxruntime_ep_amdgpu as pkg

    out: dict = {"onnxruntime": ort.__version__, "onnxruntime_file": ort.__file__,
                 "package_dir": os.path.dirname(pkg.__file__), "ep_names": pkg.get_ep_names()}
    library = pkg.get_library_path()
    ort.register_execution_provider_library("AMDGPUExecutionProvider", library)
    out["registered"] = library
    devices = ort.get_ep_devices()
    out["devices"] = [{"ep": d.ep_name, "type": str(d.device.type), "vendor_id": d.device.vendor_id}
                      for d in devices]
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if line.rstrip().endswith((".so",)) or ".so." in line}
    out["loaded"] = sorted(p for p in paths if any(k in p for k in ("amdgpu-ep", "-backend", "migraphx", "amdhip")))

    options = ort.SessionOptions()
    options.add_session_config_entry("ep.amdgpuexecutionprovider.profile", "migraphx")
    options.add_session_config_entry("ep.migraphx.fp16_enable", "1")
    amd = [d for d in devices if d.ep_name == "AMDGPUExecutionProvider"]
    if amd:
        options.add_provider_for_devices(amd, {})
        out["amd_devices"] = len(amd)
    else:
        out["amd_devices"] = 0
        out["note"] = ("no AMD GPU device here: get_ep_devices() offers no AMDGPUExecutionProvider device, so "
                       "the session runs on the CPU EP and the umbrella's routing (ORT_AMDGPU_TRACE_ROUTING) "
                       "is never reached")
    session = ort.InferenceSession(identity_model(), sess_options=options)
    out["session_providers"] = session.get_providers()
    out["session_options"] = {k: options.get_session_config_entry(k) for k in
                              ("ep.amdgpuexecutionprovider.profile", "ep.migraphx.fp16_enable")}
    result = session.run(None, {"x": np.array([1.5, -2.0], dtype=np.float32)})[0]
    out["result"] = result.tolist()
    print(json.dumps(out))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
