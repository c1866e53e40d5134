"""The sources layer: verified downloads, safe extraction, git commits, lock files, FetchContent mirror,
and locating ORT, ROCm and MIGraphX before a build starts.

The pipeline calls these:
    resolve_source(settings, ctx, dest_dir) -> Path
    fetch(url, sha256, cache, mirrors, offline) -> Path
    fetchcontent_defines(deps, ctx, dest) -> dict[str, str]
    preflight(requirements, features, options, ort, ctx) -> ResolvedPaths
    fetch_ort(settings, ctx, dest) -> Path
    lock_recipe(recipe_path, cache, mirrors) -> LockResult
    plan_lines(...) -> list[str]           (--dry-run: no network, no writes)
"""

from toolkit.sources.cache import Cache, default_cache_dir
from toolkit.sources.context import FetchContext
from toolkit.sources.deps import fetch_ort, platform_tag
from toolkit.sources.download import DownloadOptions, fetch, fetch_unpinned
from toolkit.sources.extract import extract_archive
from toolkit.sources.fetchcontent import check_covered, declared_names, fetchcontent_defines, plan_fetchcontent
from toolkit.sources.git import fetch_git
from toolkit.sources.lock import LockFile, lock_path_for, lock_recipe, recipe_urls, require_pinned
from toolkit.sources.plan import plan_lines
from toolkit.sources.preflight import PreflightOptions, ResolvedPaths, check, preflight
from toolkit.sources.settings import (SECTION_READERS, FetchContentDep, active_deps, OrtPackage, OrtSettings, Requirements,
                                      SourceSettings, fetchcontent_from_tables, source_from_argument)
from toolkit.sources.source import resolve_source

__all__ = [
    "Cache", "default_cache_dir", "FetchContext", "fetch_ort", "platform_tag", "DownloadOptions", "fetch",
    "fetch_unpinned", "extract_archive", "check_covered", "declared_names", "fetchcontent_defines",
    "plan_fetchcontent", "fetch_git", "LockFile", "lock_path_for", "lock_recipe", "recipe_urls",
    "require_pinned", "plan_lines", "PreflightOptions", "ResolvedPaths", "check", "preflight",
    "SECTION_READERS", "FetchContentDep", "active_deps", "OrtPackage", "OrtSettings", "Requirements", "SourceSettings",
    "fetchcontent_from_tables", "source_from_argument", "resolve_source",
]
