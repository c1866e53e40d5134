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
from typing import Self

from packaging.requirements import InvalidRequirement, Requirement

from toolkit.util.argcheck import IDENTIFIER
from toolkit.util.tomlfields import doc
from toolkit.util.tomlread import Site


def _requirement(spec: str, site: Site) -> None:
    try:
        Requirement(spec)
    except InvalidRequirement:
        raise site.error(f"{spec!r} is not a pip requirement") from None


def _variable(value: str, site: Site) -> None:
    if not IDENTIFIER.match(site.name):
        raise site.error("not a valid environment variable name")


def _regex(pattern: str, site: Site) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise site.error(f"not a valid regular expression: {exc}") from None


def _at_least_zero(value: float, site: Site) -> None:
    if value < 0:
        raise site.error(f"expected a number >= 0, got {value!r}")


@dataclass(frozen=True)
class SmokeSettings:
    packages: tuple[str, ...] = field(default=(), metadata=doc("pip requirements installed beside the wheel.",
                                                               each=_requirement))
    env: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Environment for the check; `{library:MODULE}` is that module's `get_library_path()`.", each=_variable))
    expect_log: tuple[str, ...] = field(default=(), metadata=doc(
        "Regular expressions stderr must match after registering.", each=_regex))
    atol: float = field(default=1e-4, metadata=doc(
        "Absolute tolerance of the device run against the CPU EP.", check=_at_least_zero))
    rtol: float = field(default=1e-4, metadata=doc("Relative tolerance of the same comparison.", check=_at_least_zero))
    provider_options: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Provider options of the device session."))
    session_config: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Session config entries of the device session."))
    wrong_provider_options: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Provider options a second session must fail with (with `wrong_error`)."))
    wrong_error: str | None = field(default=None, metadata=doc(
        "Regular expression that failure's message must match.", check=_regex))
    # toolkit/smoke/inside/smoke_genai.py
    genai: bool = field(default=False, metadata=doc(
        "Also generate with onnxruntime-genai's `amdgpu` provider and compare with its CPU provider."))
    # The range is tested (toolkit/smoke/selfcheck.py), not declared.
    onnxruntime_range: bool = field(default=False, metadata=doc(
        "Also install the wheel beside PyPI's onnxruntime at the lowest and the newest version its `[wheel] "
        "onnxruntime` range allows, each in a fresh venv, and run its self-check there."))

    def validated(self, site: Site) -> Self:
        if bool(self.wrong_provider_options) != (self.wrong_error is not None):
            raise site.key("wrong_error").error("wrong_provider_options and wrong_error go together")
        return self
