"""Patch series: a checked, ordered series of patches applied all or nothing, with diagnostics. The patch stage
and a recipe's `patch --check`/`--refresh` are toolkit/pipeline/adapters/patch.py's, the `patch` command
toolkit/cli/patching.py's.

Public API (what the pipeline calls):
    load_series(path) -> Series
    analyze(series, tree, phase, features) -> list[PatchAnalysis]            (writes nothing)
    apply_series(series, tree, phase, features) -> list[PatchAnalysis]       (all or nothing)
    patched_contents(series, tree, phase, features) -> {rel: bytes | None}    (apply, in memory only)
    refresh_series(series, pristine_tree, edited_tree, phase, features) -> RefreshResult
    format_report(analyses) -> str
    pins(entries) -> [(name, sha256)]                                       (what a build records)
Errors: SeriesError (bad series file), PatchError (a patch does not apply / cannot be refreshed).
"""

from toolkit.patching.analysis import PatchAnalysis, format_report
from toolkit.patching.apply import analyze, apply_series, patched_contents, recover
from toolkit.patching.errors import PatchError, SeriesError
from toolkit.patching.refresh import RefreshResult, refresh_series
from toolkit.patching.series import Series, SeriesEntry, load_series, pins

__all__ = [
    "PatchAnalysis", "PatchError", "RefreshResult", "Series", "SeriesEntry", "SeriesError", "analyze",
    "apply_series", "format_report", "load_series", "patched_contents", "pins", "recover", "refresh_series",
]
