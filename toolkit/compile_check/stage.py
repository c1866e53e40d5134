"""The compile-check stage: every translation unit of the hipified output (or the recipe's fixed sample)
compiled with the build root's hipcc, one report per work tree."""

from __future__ import annotations

import dataclasses
import json

from toolkit.compile_check.run import compile_tree
from toolkit.engine.build import Build
from toolkit.engine.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.fsutil import atomic_write_text

REPORT_NAME = "compile-check.json"


def compile_check_stage(b: Build, sample: bool = False) -> Stage:
    settings = b.compile_check()
    ws = b.workspace
    report_path = ws.root / REPORT_NAME

    def run() -> None:
        report = compile_tree(settings, b.kernels_dir(), ws.source, ws.root / "compile-check", b.fetch,
                              jobs=b.options.jobs, sample=sample, label=b.hipify_needed().engine)
        for line in report.lines():
            log.stage("compile-check", line)
        atomic_write_text(report_path, json.dumps(report_json(report), indent=1) + "\n")

    def plan() -> list[str]:
        what = "the recipe's sample units" if sample else "every unit"
        return [f"{what} of {b.kernels_dir()} with the build root's {settings.compiler} "
                f"({settings.mode}, {','.join(settings.targets)}) -> {report_path}"]

    return Stage("compile-check", lambda: {"settings": repr(settings), "sample": sample}, [report_path], run, plan)


def report_json(report) -> dict:
    return {
        "engine": report.label, "compiled": report.passed, "units": len(report.units), "rate": report.rate,
        "headers": report.deps, "seconds": report.seconds,
        "results": [dataclasses.asdict(u) for u in report.units],
        "failures_by_cause": report.causes(),
    }


STAGE = StageSpec("compile-check", "compile every unit of the hipified tree with the build root's hipcc",
                  applies=lambda b: b.hipify is not None and "compile_check" in b.recipe.extra,
                  make=compile_check_stage)
