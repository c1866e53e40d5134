"""The recipe's series outside a build: check it against the pristine source, or refresh it from edits
made in the work tree's patched copy (build/<recipe>/<variant>/source)."""

from __future__ import annotations

from toolkit import patching
from toolkit.patching.analysis import DISABLED
from toolkit.pipeline.build import Build, prepared
from toolkit.pipeline.options import BuildOptions
from toolkit.util import log
from toolkit.util.errors import ToolkitError


def check_patches(options: BuildOptions) -> int:
    """Analyse the series against the pristine source; nonzero when any patch would not apply."""
    with prepared(options, preflight=False) as b:
        return _check(b)


def _check(b: Build) -> int:
    series = b.series()
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
    series = b.series()
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
