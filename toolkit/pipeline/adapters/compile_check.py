"""The compile-check stage: every translation unit of the hipified output (or the recipe's fixed sample)
compiled with the build root's hipcc, one report per work tree."""

from __future__ import annotations

import dataclasses
import json

from toolkit.compile_check.run import CompileReport, compile_tree
from toolkit.compile_check.verdict import judge
from toolkit.pipeline.adapters import derive
from toolkit.pipeline.build import Build
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.fsutil import JSON, atomic_write_text

REPORT_NAME = "compile-check.json"


def compile_check_stage(b: Build, sample: bool = False, enforce: bool = True) -> Stage:
    """`enforce`: units failing that the recipe does not allow fail the stage (the report is written first);
    without it the caller judges the report (compile-check, with its --min-rate)."""
    settings = b.compile_check()
    ws = b.workspace
    report_path = ws.root / REPORT_NAME

    def run() -> None:
        report = compile_tree(settings, derive.kernels_dir(b), ws.source, ws.root / "compile-check", b.fetch,
                              jobs=b.options.jobs, sample=sample, label=b.hipify_needed().engine)
        for line in report.lines():
            log.stage("compile-check", line)
        data = report_json(report)
        atomic_write_text(report_path, json.dumps(data, indent=1) + "\n")
        if enforce:
            verdict = judge(data, settings)
            for warning in verdict.warnings:
                log.warn(warning)
            # Raised, the stage records no state: a rerun checks again instead of skipping a failed check.
            if verdict.failure is not None:
                raise verdict.failure

    def plan() -> list[str]:
        from toolkit.buildroot.make import planned
        from toolkit.compile_check.run import ROOT_NAME

        what = "the recipe's sample units" if sample else "every unit"
        return [f"{what} of {derive.kernels_dir(b)} with the build root's {settings.compiler} "
                f"({settings.mode}, {','.join(settings.targets)}) -> {report_path}", planned(ROOT_NAME)]

    return Stage("compile-check", lambda: {"settings": repr(settings), "sample": sample, "enforce": enforce},
                 [report_path], run, plan)


def report_json(report: CompileReport) -> JSON:
    return {
        "engine": report.label, "compiled": report.passed, "units": len(report.units), "rate": report.rate,
        "headers": report.deps, "seconds": report.seconds,
        "results": [dataclasses.asdict(u) for u in report.units],
        "failures_by_cause": report.causes(),
    }


STAGE = StageSpec("compile-check", "compile every unit of the hipified tree with the build root's hipcc",
                  applies=lambda b: b.hipify is not None and b.recipe.compile_check is not None,
                  make=lambda b, produced: compile_check_stage(b))
