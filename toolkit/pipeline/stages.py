"""The build pipeline: the stages, in the order a build runs them, filtered to the ones a recipe runs.

Each stage is a StageSpec in its adapter (pipeline/adapters/patch.py, pipeline/adapters/hipify.py, ...): its
name, when a build has it, how to make it; the adapter reads the settled Build and calls the package that owns
the work, which never sees a Build. This module only orders, filters and runs them (build_then: then one
adapter's step more, the work tree still locked); `--until`, the dry run and the stage reference
(docs/reference/stages.md) all come from ORDER. Each stage is skipped when its inputs are unchanged (see
runner.py); `--dry-run` prints every stage's plan and creates nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from toolkit.pipeline.adapters import api_check as api_check_stage
from toolkit.pipeline.adapters import build as build_stage
from toolkit.pipeline.adapters import check as check_stage
from toolkit.pipeline.adapters import compile_check as compile_check_stage
from toolkit.pipeline.adapters import configure as configure_stage
from toolkit.pipeline.adapters import fetchcontent as fetchcontent_stage
from toolkit.pipeline.adapters import hipify as hipify_stage
from toolkit.pipeline.adapters import patch as patch_stage
from toolkit.pipeline.adapters import repair as repair_stage
from toolkit.pipeline.adapters import source as source_stage
from toolkit.pipeline.adapters import wheel as wheel_stage
from toolkit.pipeline.build import Build, prepared, print_sources_plan
from toolkit.pipeline.options import BuildOptions
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.runner import Stage, StageResult, StageRunner, StageSpec
from toolkit.util import log
from toolkit.util.errors import RecipeError, ToolkitError

T = TypeVar("T")

ORDER: tuple[StageSpec, ...] = (
    source_stage.STAGE,
    patch_stage.BASE,
    hipify_stage.STAGE,
    patch_stage.HIPIFIED,
    compile_check_stage.STAGE,
    fetchcontent_stage.STAGE,
    configure_stage.STAGE,
    api_check_stage.STAGE,
    build_stage.STAGE,
    check_stage.STAGE,
    wheel_stage.STAGE,
    repair_stage.STAGE,
)
STAGE_NAMES = tuple(spec.name for spec in ORDER)
# Every build's first stage, named in a recipe's `stages` or not: every later stage reads the tree it brings.
ALWAYS = source_stage.STAGE.name


def check_recipe_stages(b: Build) -> None:
    """A recipe's `stages` must name stages the pipeline has."""
    for i, name in enumerate(b.recipe.stages or ()):
        if name not in STAGE_NAMES:
            raise RecipeError(f"{b.recipe.file}: key 'recipe.stages[{i}]': no stage named {name!r}",
                              hint=f"stages: {', '.join(STAGE_NAMES)}")


def stages_of(b: Build, package: bool = False) -> list[StageSpec]:
    """The stages this build runs, in order: those its recipe names (all when it names none) that apply to it;
    the packaging ones only with `package`."""
    check_recipe_stages(b)
    named = b.recipe.stages
    specs = [s for s in ORDER if (named is None or s.name in named or s.name == ALWAYS or s.part_of in named)
             and s.applies(b)]
    if package and not any(s.packaging for s in specs):
        raise ToolkitError(f"recipe {b.recipe.name} builds no wheel ({b.recipe.file})",
                           hint="add a [wheel] section"
                           + (" and 'wheel', 'repair' to [recipe] stages" if named else ""))
    return [s for s in specs if package or not s.packaging]


def _until(specs: list[StageSpec], until: str, b: Build) -> list[StageSpec]:
    names = [s.name for s in specs]
    if until == "patch" and b.recipe.series is None:
        until = ALWAYS  # nothing to patch: the tree as the source stage leaves it is the patched tree
    if until not in names:
        raise ToolkitError(f"recipe {b.recipe.name} runs no stage named '{until}'",
                           hint=f"its stages: {', '.join(names)}")
    return specs[: names.index(until) + 1]


def build_then(options: BuildOptions, then: Callable[[Build, Produced], T], until: str | None = None,
               package: bool = False, env: Mapping[str, str] | None = None) -> T:
    """Run the build's stages in order (with `package`, also wheel and repair; `until` stops after a stage), then
    `then`, an adapter's step on the settled build, with the work tree still locked: what reads or writes the tree
    after its stages (the smoke, a release entry's wheel and provenance, the survey's configure) is done before
    another build of it can start. `env` is added to the environment of the tools the stages run (a release's:
    Build.env). `then` gets what the stages produced (the configure's defines and build facts among them)."""
    with prepared(options, env=env) as b:
        produced = Produced()
        _run_stages(b, options, until, package, produced)
        return then(b, produced)


def run_build(options: BuildOptions, until: str | None = None, package: bool = False,
              env: Mapping[str, str] | None = None) -> list[StageResult]:
    """Run the build's stages, as build_then() does, for a caller that needs nothing of the tree afterwards."""
    with prepared(options, env=env) as b:
        return _run_stages(b, options, until, package, Produced())


def run_stages(b: Build, steps: list[Stage]) -> list[StageResult]:
    """Run `steps` on the build's work tree as its options say (--dry-run: the sources' plan, then each stage's;
    --force: every stage, whatever its fingerprint)."""
    if b.options.dry_run:
        print_sources_plan(b)
    return StageRunner(b.workspace.state, dry_run=b.options.dry_run, force=b.options.force).run(steps)


def _run_stages(b: Build, options: BuildOptions, until: str | None, package: bool,
                produced: Produced) -> list[StageResult]:
    log.info(f"work tree {b.workspace.root}" + (" (dry run: nothing is created)" if options.dry_run else ""))
    packaging = package or any(s.name == until and s.packaging for s in ORDER)
    specs = stages_of(b, packaging)
    if until is not None:
        specs = _until(specs, until, b)
    log.info("stages: " + " -> ".join(s.name for s in specs))
    results = run_stages(b, [spec.make(b, produced) for spec in specs])
    if not options.dry_run:
        _summarize(b, results, packaging)
    return results


def _summarize(b: Build, results: list[StageResult], packaging: bool) -> None:
    ws = b.workspace
    if packaging and ws.wheelhouse.is_dir():
        log.info(f"wheels in {ws.wheelhouse}: " + ", ".join(p.name for p in sorted(ws.wheelhouse.glob("*.whl"))))
    elif ws.lib.is_dir():
        log.info(f"libraries in {ws.lib}: " + ", ".join(sorted(p.name for p in ws.lib.glob('*.so'))))
    ran = [r.name for r in results if r.ran]
    log.info(f"stages run: {', '.join(ran) if ran else 'none (everything up to date)'}")


def built_wheels(b: Build) -> list[Path]:
    wheels = sorted(b.workspace.wheelhouse.glob("*.whl"))
    if not wheels:
        raise ToolkitError(f"no wheel in {b.workspace.wheelhouse}", hint="run `nox -s wheel` first")
    return wheels


def stage_table() -> list[tuple[str, str, str]]:
    """(stage, what it does, the module that provides it), in build order: the stage reference."""
    return [(s.name, s.summary, s.make.__module__.replace(".", "/") + ".py") for s in ORDER]
