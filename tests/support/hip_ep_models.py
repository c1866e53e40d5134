"""Small ONNX models for hip-ep's MLIR pipeline, made with onnx.helper: MatMul+Relu, and a transformer attention
block (the kind of graph hip-ep exists for: layer norm, projections, multi-head attention, residual)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _save(graph, path: Path, opset: int = 17, extra_domains: dict[str, int] | None = None) -> Path:
    import onnx
    from onnx import helper

    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, v) for d, v in (extra_domains or {}).items())]
    model = helper.make_model(graph, opset_imports=opsets)
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


def attention(path: Path, seq: int = 8, dim: int = 16, heads: int = 2) -> Path:
    """A transformer's attention block: LayerNormalization, the Q/K/V projections, ORT's MultiHeadAttention
    (com.microsoft, what LLM exports use), the output projection and the residual Add."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal((dim, dim)).astype(np.float32) / dim, name=n)
               for n in ("wq", "wk", "wv", "wo")]
    norm = [numpy_helper.from_array(np.ones(dim, np.float32), name="gamma"),
            numpy_helper.from_array(np.zeros(dim, np.float32), name="beta")]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["h"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["h", "wq"], ["q"]),
        helper.make_node("MatMul", ["h", "wk"], ["k"]),
        helper.make_node("MatMul", ["h", "wv"], ["v"]),
        helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["context"], domain="com.microsoft",
                         num_heads=heads),
        helper.make_node("MatMul", ["context", "wo"], ["o"]),
        helper.make_node("Add", ["x", "o"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, dim])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, dim])],
        initializer=[*weights, *norm],
    )
    return _save(graph, path, extra_domains={"com.microsoft": 1})
