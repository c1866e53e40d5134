"""The smoke's MatMul+Relu model as ONNX bytes, written here with the protobuf wire format: the Windows smoke runs
where no onnx package can be imported (the harness is a C program under Wine), and the model is four messages.

y = Relu(x @ w): x is float [rows, cols] (the harness fills it), w a constant [cols, 4] initializer. ONNX's own
checker and ONNX Runtime's CPU EP read it the same as onnx.helper's model (tests/smoke/test_onnx_model.py)."""

from __future__ import annotations

import struct

OUT_COLS = 4
OPSET = 13
IR_VERSION = 8
FLOAT = 1  # TensorProto.FLOAT


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _value_info(name: str, dims: tuple[int, ...]) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d)) for d in dims)            # TensorShapeProto.dim[].dim_value
    tensor_type = _int(1, FLOAT) + _bytes(2, shape)                 # TypeProto.Tensor: elem_type, shape
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))       # ValueInfoProto: name, type.tensor_type


def weights(cols: int) -> list[float]:
    """w, row-major [cols, OUT_COLS]: small values of both signs, so Relu cuts some outputs to zero."""
    return [((i * 5) % 9 - 4) / 4.0 for i in range(cols * OUT_COLS)]


def matmul_relu_model(rows: int, cols: int) -> bytes:
    w = weights(cols)
    tensor = b"".join([*(_int(1, d) for d in (cols, OUT_COLS)), _int(2, FLOAT), _bytes(8, "w"),
                       _bytes(9, struct.pack(f"<{len(w)}f", *w))])
    nodes = [_bytes(1, "x") + _bytes(1, "w") + _bytes(2, "mm") + _bytes(3, "matmul") + _bytes(4, "MatMul"),
             _bytes(1, "mm") + _bytes(2, "y") + _bytes(3, "relu") + _bytes(4, "Relu")]
    graph = b"".join([*(_bytes(1, n) for n in nodes), _bytes(2, "matmul_relu"), _bytes(5, tensor),
                      _bytes(11, _value_info("x", (rows, cols))), _bytes(12, _value_info("y", (rows, OUT_COLS)))])
    opset = _bytes(1, "") + _int(2, OPSET)
    return _int(1, IR_VERSION) + _bytes(2, "ort-amdgpu-toolkit") + _bytes(7, graph) + _bytes(8, opset)
