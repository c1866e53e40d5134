"""The sources layer: verified downloads, safe extraction, git commits, lock files, FetchContent mirror,
and locating ORT, ROCm and MIGraphX before a build starts.

The pipeline calls these:
    resolve_source(settings, ctx, dest_dir) -> Path
    fetch(url, sha256, cache, mirrors, offline) -> Path
    provider_defines(deps, ctx, dest, recipe, binary_dir) -> dict[str, str]
    preflight(requirements, features, options, ort, ctx) -> ResolvedPaths
    fetch_ort(settings, ctx) -> Path
    unpack_pinned(archive, ctx, dest, what) -> Path   (every archive a recipe names is a PinnedArchive)
    lock_recipe(recipe_path, cache, mirrors) -> LockResult
    plan_lines(...) -> list[str]           (--dry-run: no network, no writes)
"""

import importlib

# Names resolve on first use (PEP 562): `python -m toolkit` imports every command module at start-up,
# and some of it runs inside bare containers that have the standard library only, not requests/platformdirs.
_WHERE = {
    "Cache": "cache",
    "default_cache_dir": "cache",
    "FetchContext": "context",
    "fetch_ort": "deps",
    "platform_tag": "deps",
    "DownloadOptions": "download",
    "fetch": "download",
    "fetch_unpinned": "download",
    "extract_archive": "extract",
    "provider_defines": "fetchcontent",
    "read_report": "fetchcontent",
    "plan_fetchcontent": "fetchcontent",
    "fetch_git": "git",
    "LockFile": "lock",
    "lock_path_for": "lock",
    "lock_recipe": "lock",
    "recipe_urls": "lock",
    "require_pinned": "lock",
    "PinnedArchive": "pinned",
    "unpack_pinned": "archive",
    "plan_lines": "plan",
    "PreflightOptions": "preflight",
    "ResolvedPaths": "preflight",
    "check": "preflight",
    "preflight": "preflight",
    "SECTION_READERS": "settings",
    "FetchContentDep": "settings",
    "active_deps": "settings",
    "OrtPackage": "settings",
    "OrtSettings": "settings",
    "Requirements": "settings",
    "SourceSettings": "settings",
    "fetchcontent_from_tables": "settings",
    "source_from_argument": "settings",
    "resolve_source": "source",
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name = _WHERE[name]
    module = importlib.import_module(f"toolkit.sources.{module_name}")
    # Bind every name of that module now: importing submodule `preflight` sets this package's attribute
    # `preflight` to the module, which must give way to the function of that name.
    for exported, where in _WHERE.items():
        if where == module_name:
            globals()[exported] = getattr(module, exported)
    return globals()[name]


__all__ = [
    "Cache", "default_cache_dir", "FetchContext", "fetch_ort", "platform_tag", "DownloadOptions", "fetch",
    "fetch_unpinned", "extract_archive", "provider_defines", "read_report",
    "plan_fetchcontent", "fetch_git", "LockFile", "lock_path_for", "lock_recipe", "recipe_urls",
    "require_pinned", "PinnedArchive", "unpack_pinned", "plan_lines", "PreflightOptions", "ResolvedPaths", "check",
    "preflight",
    "SECTION_READERS", "FetchContentDep", "active_deps", "OrtPackage", "OrtSettings", "Requirements", "SourceSettings",
    "fetchcontent_from_tables", "source_from_argument", "resolve_source",
]
