"""`release` on a request: plan it (a dry run stops there), then build every entry, here through the pipeline or in
a container of its ROCm axis's root, and publish the records (orchestrator.run_release).

What the release adds to its builds' environment (SOURCE_DATE_EPOCH and TZ for reproducible archives, the shared
compile cache's ccache settings) is one mapping handed to each build and to the processes they start; this
process's environment is left as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolkit.pipeline.options import option_argv, release_overrides
from toolkit.release import compile_cache, in_root
from toolkit.release.entry import build_release_entry
from toolkit.release.matrix import Entry
from toolkit.release.orchestrator import BuildFn, ReleaseResult, run_release
from toolkit.release.plan import ReleasePlan, plan_release, print_plan
from toolkit.release.reproducible import release_env
from toolkit.release.request import ReleaseRequest
from toolkit.util import log
from toolkit.util.fsutil import JSON


def make_release(request: ReleaseRequest) -> ReleaseResult | None:
    """Build and publish the release `request` asks for; None for a dry run, which prints the plan."""
    plan = plan_release(request)
    if request.dry_run:
        print_plan(plan)
        return None
    cache = compile_cache.compile_cache_config(plan.cache_url, basedir=Path.cwd(), origin=plan.cache_origin)
    log.info(f"compile cache: {cache.describe()}")
    env = {**release_env(request.recipe), **cache.build_env()}
    epoch = env.get("SOURCE_DATE_EPOCH")
    # Entries built in containers of their roots record those roots' tools; the host's would say nothing true.
    tools: JSON | None = {} if plan.all_elsewhere else None
    return run_release(list(plan.entries), entry_builder(plan, env), plan.out_dir, recipe=str(request.recipe),
                       no_wait=request.no_wait, toolchain=tools, facts_out=request.facts_out, env=env,
                       announce=in_root.entry_of_host_release() is None,
                       meta=in_root.meta_writer(plan.wheel, epoch) if plan.wheel and plan.writes_meta else None)


def pipeline_builder(recipe: Path, *, no_wait: bool, overrides: Mapping[str, Any],
                     env: Mapping[str, str]) -> BuildFn:
    """How an entry is built here: the pipeline builds and repairs its wheel (entry.build_release_entry)."""
    return functools.partial(build_release_entry, recipe, no_wait=no_wait, overrides=overrides, env=env)


def entry_builder(plan: ReleasePlan, env: Mapping[str, str]) -> BuildFn:
    """How each entry is built: here through the pipeline, or in a container of its ROCm axis's root; either way
    its wheel must be of its ROCm variant."""
    request = plan.request
    here = pipeline_builder(request.recipe, no_wait=request.no_wait, overrides=release_overrides(request.build),
                            env=env)
    passed = option_argv(request.build, in_root.PASSED_INTO_ROOT)

    def build(entry: Entry, work_dir: Path) -> tuple[Path, JSON]:
        if plan.elsewhere.get(entry.id):
            wheel, facts = in_root.build_in_root_image(request.recipe, entry, work_dir, release_args=passed,
                                                       offline=request.build.offline, env=env)
        else:
            wheel, facts = here(entry, work_dir)
        in_root.check_rocm_variant(entry, Path(wheel), plan.variants)
        return wheel, facts

    return build
