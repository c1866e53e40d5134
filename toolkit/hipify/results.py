"""What converting one file yields: its text, the CUDA names left unmapped, warnings, and its own names."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Finding:
    """A CUDA identifier or header left unmapped: where, what, and why."""
    line: int
    name: str
    reason: str


@dataclass(frozen=True)
class Warning:
    """Code that converts but may be wrong on AMD (warp size 64) or was read with a policy."""
    line: int
    kind: str
    message: str


@dataclass
class FileResult:
    text: str
    unmapped: list[Finding] = field(default_factory=list)
    warnings: list[Warning] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)  # names this file defines (macros, types)
    substituted: list[int] = field(default_factory=list)  # the [[hipify.substitute]] rules that changed it
