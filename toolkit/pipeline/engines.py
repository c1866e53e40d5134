"""The same recipe run once per hipify engine, each in its own work tree, to compare what compiles."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from toolkit.pipeline import stages
from toolkit.pipeline.adapters.compile_check import REPORT_NAME, compile_check_stage
from toolkit.pipeline.build import prepared
from toolkit.pipeline.options import BuildOptions
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.runner import StageResult
from toolkit.recipe.hipify import Engine
from toolkit.util import log
from toolkit.util.fsutil import JSON

# The stages before the compile check that make the tree it compiles.
_BEFORE = ("source", "patch", "hipify", "patch-hipified")


def run_engine(options: BuildOptions, engine: Engine, sample: bool = False,
               perl: str | None = None) -> tuple[StageResult, JSON | None]:
    """The recipe's stages up to compile-check with hipify.engine set to `engine`, in its own work tree
    (variant = engine name). Returns (hipify StageResult, compile report dict; None for a dry run, which only
    prints each stage's plan)."""
    with prepared(dataclasses.replace(options, variant=engine, hipify_engine=engine)) as settled:
        hipify = settled.hipify_needed()
        # dataclasses.replace's keywords, of several fields' types (a TypedDict would not take update's keywords)
        chosen: dict[str, Any] = {"hipify_perl": perl or hipify.hipify_perl}
        if sample:  # the sample's units and every header: the rest of the tree would only be converted to sit there
            cc = settled.compile_check()
            chosen.update(only_units=tuple(cc.sample), unit_globs=tuple(cc.units))
        b = dataclasses.replace(settled, hipify=dataclasses.replace(hipify, **chosen))
        produced = Produced()
        steps = [spec.make(b, produced) for spec in stages.stages_of(b) if spec.name in _BEFORE]
        steps.append(compile_check_stage(b, sample=sample, enforce=False))  # the caller judges every engine
        if options.dry_run:
            log.info(f"{engine}: work tree {b.workspace.root} (dry run: nothing is created)")
        results = stages.run_stages(b, steps)
        hipify_result = next(r for r in results if r.name == "hipify")
        if options.dry_run:
            return hipify_result, None
        # Read while the work tree is locked: another build of this engine's tree would rewrite the report.
        return hipify_result, json.loads((b.workspace.root / REPORT_NAME).read_text())
