"""The smoke's MatMul+Relu model, written with the protobuf wire format by hand, is what ONNX and ORT read."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort

from toolkit.smoke.onnx_model import OUT_COLS, matmul_relu_model, weights


def test_the_model_passes_onnxs_checker_and_runs_as_relu_of_a_matmul() -> None:
    data = matmul_relu_model(2, 3)
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Relu"]
    x = np.array([((i * 7) % 11) / 5 - 1 for i in range(6)], dtype=np.float32).reshape(2, 3)
    w = np.array(weights(3), dtype=np.float32).reshape(3, OUT_COLS)
    (y,) = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert y.shape == (2, OUT_COLS)
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-6)
    assert (y == 0).any() and (y > 0).any()  # Relu cuts some, not all
