"""Small ONNX models for hip-ep's MLIR pipeline, made with onnx.helper: MatMul+Relu, and a single-head
self-attention block (the kind of graph hip-ep exists for: projections, scaled scores, softmax, weighted sum)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _save(graph, path: Path, opset: int = 17) -> Path:
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # what ORT 1.24 and newer all read
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def matmul_relu(path: Path) -> Path:
    """y = Relu(x @ w): x [2, 3], w [3, 4] a constant."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.arange(-6, 6, dtype=np.float32).reshape(3, 4) / 4, name="w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "matmul_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[w],
    )
    return _save(graph, path)


def attention(path: Path, seq: int = 8, dim: int = 16) -> Path:
    """Single-head self-attention: softmax((x Wq)(x Wk)^T / sqrt(d)) (x Wv), then an output projection."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal((dim, dim)).astype(np.float32) / dim, name=n)
               for n in ("wq", "wk", "wv", "wo")]
    scale = numpy_helper.from_array(np.array(1 / np.sqrt(dim), dtype=np.float32), name="scale")
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "v"], ["context"]),
        helper.make_node("MatMul", ["context", "wo"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, dim])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, dim])],
        initializer=[*weights, scale],
    )
    return _save(graph, path)
