"""The sources layer: verified downloads, safe extraction, git commits, lock files, FetchContent mirror,
and locating ORT, ROCm and MIGraphX before a build starts.

Nothing is re-exported here: each caller imports from the module that defines what it uses, so mypy and the
import-cycle test see every edge. What the pipeline calls, by module:
    source.resolve_source(settings, ctx, dest_dir) -> Path
    download.fetch(url, sha256, cache, mirrors, offline, options) -> Path
    fetchcontent.prepare_dep(dep, ctx, dest) -> Path   (the fetchcontent stage: fetch, unpack, verify)
    fetchcontent.write_provider_map(deps, dest, recipe), handover_defines(dest, binary_dir)   (paths only)
    preflight.preflight(requirements, features, options, ort, ctx) -> ResolvedPaths   (check(): collect, not raise)
    components.fetch_ort(settings, ctx) -> Path
    archive.unpack_pinned(archive, ctx, dest, what) -> Path   (every archive a recipe names is a PinnedArchive)
    lock.lock_recipe(recipe_path, cache, mirrors) -> LockResult
    plan.plan_lines(...) -> list[str]           (--dry-run: no network, no writes)
"""
