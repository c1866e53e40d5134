"""The recipe's `[smoke]` section: what `smoke` checks after installing the wheel in a fresh venv (toolkit/smoke/).

    [smoke]
    packages = ["onnxruntime-ep-webgpu"]        # installed into the smoke venv beside the wheel
    env = { AMDGPU_MIGRAPHX_EP_LIBRARY = "{library:onnxruntime_ep_webgpu}", AMDGPU_EP_VERBOSE = "1" }
    expect_log = ['^\\[amdgpu-ep\\] forwarded [1-9]']   # regexes stderr must match after registering
    atol = 1e-4
    rtol = 1e-4
    onnxruntime_range = true                    # also: the wheel beside PyPI's lowest and newest onnxruntime
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from toolkit.recipe.schema import doc, recipe_table
from toolkit.util.argcheck import IDENTIFIER
from toolkit.util.tomlread import Table


@recipe_table("smoke")
@dataclass(frozen=True)
class SmokeSettings:
    packages: tuple[str, ...] = field(default=(), metadata=doc("pip requirements installed beside the wheel."))
    env: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Environment for the check; `{library:MODULE}` is that module's `get_library_path()`."))
    expect_log: tuple[str, ...] = field(default=(), metadata=doc(
        "Regular expressions stderr must match after registering."))
    atol: float = field(default=1e-4, metadata=doc("Absolute tolerance of the device run against the CPU EP."))
    rtol: float = field(default=1e-4, metadata=doc("Relative tolerance of the same comparison."))
    provider_options: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Provider options of the device session."))
    session_config: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Session config entries of the device session."))
    wrong_provider_options: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Provider options a second session must fail with (with `wrong_error`)."))
    wrong_error: str | None = field(default=None, metadata=doc(
        "Regular expression that failure's message must match."))
    # toolkit/smoke/inside/smoke_genai.py
    genai: bool = field(default=False, metadata=doc(
        "Also generate with onnxruntime-genai's `amdgpu` provider and compare with its CPU provider."))
    # The range is tested (toolkit/smoke/selfcheck.py), not declared.
    onnxruntime_range: bool = field(default=False, metadata=doc(
        "Also install the wheel beside PyPI's onnxruntime at the lowest and the newest version its `[wheel] "
        "onnxruntime` range allows, each in a fresh venv, and run its self-check there."))


def _number(t: Table, key: str, default: float) -> float:
    value: float = t.number(key, default)
    if value < 0:
        raise t.error(key, f"expected a number >= 0, got {value!r}")
    return value


def from_table(t: Table, recipe_dir: Path) -> SmokeSettings:
    """Read `[smoke]`."""
    packages = t.str_list("packages", [])
    for i, spec in enumerate(packages):
        try:
            Requirement(spec)
        except InvalidRequirement:
            raise t.error(f"packages[{i}]", f"{spec!r} is not a pip requirement") from None
    env = t.str_map("env", {})
    for name in env:
        if not IDENTIFIER.match(name):
            raise t.error(f"env.{name}", "not a valid environment variable name")
    expect_log = t.str_list("expect_log", [])
    for i, pattern in enumerate(expect_log):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise t.error(f"expect_log[{i}]", f"not a valid regular expression: {exc}") from None
    atol = _number(t, "atol", SmokeSettings.atol)
    rtol = _number(t, "rtol", SmokeSettings.rtol)
    provider_options = t.str_map("provider_options", {})
    session_config = t.str_map("session_config", {})
    wrong_provider_options = t.str_map("wrong_provider_options", {})
    wrong_error = t.str("wrong_error", None)
    if wrong_error is not None:
        try:
            re.compile(wrong_error)
        except re.error as exc:
            raise t.error("wrong_error", f"not a valid regular expression: {exc}") from None
    if bool(wrong_provider_options) != (wrong_error is not None):
        raise t.error("wrong_error", "wrong_provider_options and wrong_error go together")
    genai = t.bool("genai", False)
    onnxruntime_range = t.bool("onnxruntime_range", False)
    t.done()
    return SmokeSettings(tuple(packages), env, tuple(expect_log), atol, rtol, provider_options, session_config,
                         wrong_provider_options, wrong_error, genai, onnxruntime_range)
