"""The patch stages: the recipe's series applied to a copy of the source (phase `base`) and to a copy of
hipify's output (phase `hipified`). One stage serves both phases; only the tree it copies and the folder it
leaves differ. Outside a build, the same series of a settled build is checked against the pristine source or
refreshed from edits made in the work tree's patched copy (build/<recipe>/<variant>/source): `patch --check`,
`patch --refresh`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolkit import patching
from toolkit.patching.analysis import DISABLED
from toolkit.pipeline.adapters import derive
from toolkit.pipeline.adapters.source import copy_into
from toolkit.pipeline.build import Build, prepared
from toolkit.pipeline.options import BuildOptions
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON

# What each phase patches, and where the patched copy goes.
_PHASES: dict[str, tuple[str, Callable[[Build], Path], Callable[[Build], Path]]] = {
    "base": ("patch", lambda b: b.source_dir, lambda b: b.workspace.source),
    "hipified": ("patch-hipified", lambda b: b.workspace.hipified, lambda b: b.workspace.hipified_patched),
}


def patch_stage(b: Build, phase: str, produced: Produced) -> Stage:
    name, tree_of, out_of = _PHASES[phase]
    tree, out = tree_of(b), out_of(b)

    def inputs() -> JSON:
        # The pristine source's digest is this stage's own input; hipify's output is already in the upstream
        # fingerprint, so only the series counts there.
        found = {"source": str(tree), "digest": produced.digest(name)} if phase == "base" else {}
        series = b.series
        if b.recipe.series is None or series is None:
            return {**found, "series": None}
        return {**found, "series": str(b.recipe.series), "series_text": series.text,
                "active": derive.patch_pins(b, phase)}

    def run() -> None:
        patched: set[str] = set()

        def apply(copy: Path) -> None:
            series = b.series
            if series is not None:
                for analysis in patching.apply_series(series, copy, phase, sorted(b.enabled())):
                    log.stage(name, str(analysis))
                    patched.update(analysis.changes)

        written = copy_into(tree, out, b.workspace.root, apply)
        log.stage(name, f"{len(patched)} file(s) patched; {len(written)} file(s) rewritten in {out}")

    def plan() -> list[str]:
        lines = [f"{'source' if phase == 'base' else 'hipified tree'} {tree}", f"patched copy -> {out}"]
        if b.recipe.series is not None:
            on = ", ".join(sorted(b.enabled())) or "none"
            lines.append(f"series {b.recipe.series} (phase {phase}, features: {on})")
        return lines

    return Stage(name, inputs, [out], run, plan)


def _has_hipified_patches(b: Build) -> bool:
    return b.hipify is not None and bool(derive.active_patches(b, "hipified"))


# The source stage brought the tree into the work tree; this one patches it (from the pristine source, so a
# changed series never applies on top of the last one's result) and exists only when the recipe has a series.
BASE = StageSpec("patch", "apply the series' base patches to the work tree's source (build/<recipe>/<variant>/source)",
                 applies=lambda b: b.recipe.series is not None,
                 make=lambda b, produced: patch_stage(b, "base", produced))
HIPIFIED = StageSpec("patch-hipified", "apply the series' hipified patches to a copy of hipify's output",
                     applies=_has_hipified_patches, make=lambda b, produced: patch_stage(b, "hipified", produced))


def check_patches(options: BuildOptions) -> int:
    """Analyse the series against the pristine source; nonzero when any patch would not apply."""
    with prepared(options, preflight=False) as b:
        return _check(b)


def _check(b: Build) -> int:
    series = b.series
    if series is None:
        log.info(f"recipe {b.recipe.name} has no patch series")
        return 0
    analyses = patching.analyze(series, b.source_dir, "base", sorted(b.enabled()))
    print(patching.format_report(analyses))
    failed = [a for a in analyses if not a.ok]
    # A patch its when= or tree conditions leave out neither applies nor fails: it is counted apart.
    left_out = sum(1 for a in analyses if a.status == DISABLED)
    taken = len(analyses) - left_out
    log.info(f"{taken - len(failed)} of {taken} patch(es) of phase base apply to {b.source_dir}"
             + (f"; {left_out} left out by their conditions" if left_out else ""))
    return 1 if failed else 0


def refresh_patches(options: BuildOptions) -> int:
    """Rewrite the series from edits made in the work tree's patched copy."""
    with prepared(options, preflight=False) as b:
        return _refresh(b)


def _refresh(b: Build) -> int:
    series = b.series
    if series is None:
        raise ToolkitError(f"recipe {b.recipe.name} has no patch series to refresh ({b.recipe.file})")
    if not b.workspace.source.is_dir():
        raise ToolkitError(f"no patched copy at {b.workspace.source} to refresh from",
                           hint="run `nox -s patch` first, then edit the files there")
    result = patching.refresh_series(series, b.source_dir, b.workspace.source, "base", sorted(b.enabled()))
    print(result.report())
    log.info(f"{len(result.written)} file(s) rewritten in {series.directory}" if result.changed
             else "series unchanged")
    return 0
