"""Registering the EP library with ONNX Runtime, for the self-check (shipped as `_registration.py`): the devices it
offers, and what ORT and the EP said meanwhile. Standard library only."""

from __future__ import annotations

import os
import sys
from typing import Any


class _Stderr:
    """fd 2 sent to a file while ORT and the EP libraries run: their own lines become facts, not noise."""

    def __enter__(self) -> _Stderr:
        import tempfile

        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)

    def lines(self) -> list[str]:
        self.file.seek(0)
        # Each line once: ORT asks a library for its factories more than once, and the EP says the same each time.
        # ORT's Windows logger writes UTF-16 (wide characters) where the EP writes bytes: its NULs go.
        text = self.file.read().decode("utf-8", "replace").replace("\0", "")
        return list(dict.fromkeys(line for line in text.splitlines() if line.strip()))


def register(ep_name: str, path: str, ort_facts: dict[str, Any]) -> dict[str, Any]:
    """Register the EP library with ORT and list the devices it offers, then unregister. Not tried with an ORT
    outside the range: an ORT older than the plugin EP API the library asks for can crash the process."""
    if ort_facts["version"] is None or not ort_facts["in_range"]:
        found = (f"onnxruntime {ort_facts['version']} is installed" if ort_facts["version"] else
                 "onnxruntime is not installed")
        return {"attempted": False, "error": None, "devices": [], "log": [],
                "skipped": f"{found}; the EP needs onnxruntime{ort_facts['supported']}"}
    try:
        import onnxruntime as ort
    except Exception as exc:
        return {"attempted": False, "error": f"import onnxruntime: {type(exc).__name__}: {exc}", "devices": [],
                "log": []}
    if not hasattr(ort, "register_execution_provider_library"):
        return {"attempted": False, "error": f"onnxruntime {ort.__version__} has no plugin EP API (1.22 and later)",
                "devices": [], "log": []}

    def ours() -> list[dict[str, Any]]:
        return [{"type": d.device.type.name, "vendor": d.device.vendor, "vendor_id": f"{d.device.vendor_id:#06x}",
                 "device_id": f"{d.device.device_id:#06x}"} for d in ort.get_ep_devices() if d.ep_name == ep_name]

    already: dict[str, Any] = {"attempted": False, "error": None, "already_registered": True, "log": []}
    if ours():  # registered already in this process: its devices are the answer
        return {**already, "devices": ours()}
    with _Stderr() as said:
        try:
            ort.register_execution_provider_library(ep_name, path)
        except Exception as exc:
            if "already registered" in str(exc):  # by this process, with zero devices
                return {**already, "devices": [], "log": said.lines()}
            error = f"{type(exc).__name__}: {exc}"
            return {"attempted": True, "error": error, "devices": [], "log": said.lines()}
        devices = ours()
        try:
            ort.unregister_execution_provider_library(ep_name)
        except Exception:  # the devices are what was asked; a failed unregister is ORT's to report later
            pass
    return {"attempted": True, "error": None, "devices": devices, "log": said.lines()}
