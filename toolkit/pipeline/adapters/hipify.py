"""The hipify stage: the patched tree's CUDA sources converted to HIP out of tree; only changed files are
rewritten, so Ninja rebuilds only what a change reached."""

from __future__ import annotations

from toolkit.hipify.tree import engine_identity, hipify_tree
from toolkit.pipeline.build import Build
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.errors import ToolkitError


def hipify_stage(b: Build) -> Stage:
    settings = b.hipify
    if settings is None:  # the stage applies only to a recipe with [hipify]
        raise ToolkitError(f"recipe {b.recipe.name} has no [hipify] section ({b.recipe.file})")
    ws = b.workspace

    def run() -> None:
        report = hipify_tree(settings, ws.source, ws.hipified, jobs=b.options.jobs,
                             perl_cache=b.fetch.cache.root / "hipify-perl")
        for line in report.lines():
            log.stage("hipify", line)
        warn_unused(report.unused_substitutions)

    def plan() -> list[str]:
        return [f"{settings.engine} engine: {ws.source} -> {ws.hipified}" + (" (strict)" if settings.strict else "")]

    # The tree's content is already in the upstream fingerprint; the settings and the engine (its version and
    # mapping tables: a corrected mapping must reach the output) are the stage's own inputs.
    def inputs() -> dict[str, str]:
        return {"settings": repr(settings), **engine_identity()}

    return Stage("hipify", inputs, [ws.hipified], run, plan)


def warn_unused(lines: list[str], shown: int = 3) -> None:
    """A warning per substitution that matched nothing (strict mode has raised on them already); past `shown`,
    one line says how many more, and -v lists them: a recipe carrying a whole project's fix-up list (ORT's) has
    dozens meant for files or an engine this build does not have."""
    for line in lines[:shown]:
        log.warn(line)
    if len(lines) > shown:
        log.warn(f"... and {len(lines) - shown} more [[hipify.substitute]] rules matched nothing (-v lists them)")
        for line in lines[shown:]:
            log.debug(line)


STAGE = StageSpec("hipify", "convert the recipe's CUDA sources to HIP, out of tree (build/<recipe>/<variant>/hipified)",
                  applies=lambda b: b.hipify is not None, make=lambda b, produced: hipify_stage(b))
