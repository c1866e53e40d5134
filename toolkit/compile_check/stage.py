"""The compile-check stage of the pipeline, and the same recipe run once per hipify engine to compare them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from toolkit.util import log
from toolkit.engine.runner import Stage

REPORT_NAME = "compile-check.json"


def compile_check_stage(b, sample: bool = False) -> Stage:
    """Compile every unit of the hipified output (or the recipe's fixed sample) with the root's hipcc."""
    settings = b.recipe.extra["compile_check"]
    ws = b.workspace
    report_path = ws.root / REPORT_NAME

    def tree() -> Path:
        from toolkit.engine.pipeline import ws_kernels_dir
        return ws_kernels_dir(b)

    def run() -> None:
        from toolkit.compile_check.run import compile_tree
        from toolkit.util.fsutil import atomic_write_text

        report = compile_tree(settings, tree(), ws.source, ws.root / "compile-check", b.fetch,
                              jobs=b.options.jobs, sample=sample, label=b.recipe.extra["hipify"].engine)
        for line in report.lines():
            log.stage("compile-check", line)
        atomic_write_text(report_path, json.dumps(report_json(report), indent=1) + "\n")

    def plan() -> list[str]:
        what = "the recipe's sample units" if sample else "every unit"
        return [f"{what} of {tree()} with the build root's {settings.compiler} "
                f"({settings.mode}, {','.join(settings.targets)}) -> {report_path}"]

    return Stage("compile-check", lambda: {"settings": repr(settings), "sample": sample}, [report_path], run, plan)


def report_json(report) -> dict:
    return {
        "engine": report.label, "compiled": report.passed, "units": len(report.units), "rate": report.rate,
        "headers": report.deps, "seconds": report.seconds,
        "results": [dataclasses.asdict(u) for u in report.units],
        "failures_by_cause": report.causes(),
    }


def run_engine(options, engine: str, sample: bool = False, perl: str | None = None):
    """The recipe's stages up to compile-check with hipify.engine set to `engine`, in its own work tree
    (variant = engine name). Returns (hipify StageResult, compile report dict)."""
    from toolkit.engine.build import prepare
    from toolkit.engine.pipeline import stages_for
    from toolkit.engine.runner import StageRunner

    opts = dataclasses.replace(options, variant=engine)
    b = prepare(opts)
    hip = b.recipe.extra["hipify"]
    chosen = {"engine": engine, "hipify_perl": perl or hip.hipify_perl}
    if sample:  # the sample's units and every header: the rest of the tree would only be converted to sit there
        cc = b.recipe.extra["compile_check"]
        chosen.update(only_units=tuple(cc.sample), unit_globs=tuple(cc.units))
    b.recipe.extra["hipify"] = dataclasses.replace(hip, **chosen)
    stages = [s for s in stages_for(b) if s.name in ("patch", "hipify", "patch-hipified")]
    stages.append(compile_check_stage(b, sample=sample))
    results = StageRunner(b.workspace.state, dry_run=False, force=options.force).run(stages)
    hipify_result = next(r for r in results if r.name == "hipify")
    report = json.loads((b.workspace.root / REPORT_NAME).read_text())
    return hipify_result, report
