"""Build and packaging toolkit for ONNX Runtime on AMD GPUs."""

__version__ = "0.1.0"
