"""Whether a compile check passed: every unit compiled but those the recipe expects to fail, or, where a
minimum rate is asked for (the recipe's `min_rate`, or `compile-check --min-rate`), at least that percentage.

A report is the stage's compile-check.json (toolkit.pipeline.adapters.compile_check.report_json).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolkit.recipe.compile_check import CompileCheckSettings
from toolkit.util.errors import CheckFailed
from toolkit.util.fsutil import JSON

_NAMED = 5  # units named in a failure's line; the report and compile-check.json list them all


class CompileCheckFailed(CheckFailed):
    """Units failed that the recipe does not allow to fail."""


@dataclass
class Verdict:
    failure: CompileCheckFailed | None = None
    warnings: list[str] = field(default_factory=list)


def judge(report: JSON, settings: CompileCheckSettings, min_rate: float | None = None,
          min_rate_from: str = "--min-rate") -> Verdict:
    """`min_rate` (percent) replaces the recipe's; `min_rate_from` names where it came from."""
    label = f"compile check [{report['engine']}]"
    results = report["results"]
    verdict = Verdict()
    for r in results:
        expected = settings.expected_failure(r["unit"])
        if r["ok"] and expected is not None:
            verdict.warnings.append(f"{label}: {r['unit']} compiled, though the recipe expects it to fail "
                                    f"({expected.reason}): its [[compile_check.expected_failure]] can go")
    required, source = (min_rate, min_rate_from) if min_rate is not None else (settings.min_rate,
                                                                                "the recipe's min_rate")
    if required is not None:
        percent = 100 * report["rate"]
        # In whole numbers: 29 of 100 units is 29%, where 100 * 0.29 is 28.999999999999996.
        if report["compiled"] * 100 < required * report["units"]:
            verdict.failure = CompileCheckFailed(
                f"{label}: {percent:.1f}% of units compiled ({report['compiled']}/{report['units']}), below the "
                f"required {required:g}% ({source})", hint="the report above lists each failing unit's first error")
        return verdict
    unexpected = [r for r in results if not r["ok"] and settings.expected_failure(r["unit"]) is None]
    if unexpected:
        named = ", ".join(r["unit"] for r in unexpected[:_NAMED])
        more = f" and {len(unexpected) - _NAMED} more" if len(unexpected) > _NAMED else ""
        first = unexpected[0]
        # A compiler error is located (`unit:line:col: ...`); a driver's error names no file.
        said = first["error"]
        if not said.startswith(first["unit"] + ":"):
            said = f"{first['unit']}: {said}"
        verdict.failure = CompileCheckFailed(
            f"{label}: {len(unexpected)} of {len(results)} units failed that the recipe does not expect to fail: "
            f"{named}{more} (first error: {said})",
            hint="fix them; or, for units that cannot compile here, list each in the recipe as "
                 "[[compile_check.expected_failure]] with its unit and reason, or set [compile_check] min_rate "
                 "(a percentage)")
    return verdict
