"""The smoke after a build (`build --smoke`): the wheel in the work tree installed and checked the way its platform
runs it, a Linux wheel in a fresh venv with onnxruntime (toolkit/smoke/run.py), a Windows wheel by the harness
under Wine against ORT's own Windows DLLs (toolkit/smoke/wine.py). Run after the build's stages with the work tree
still locked (stages.build_then): no other build replaces the wheel while it is installed and tested."""

from __future__ import annotations

from toolkit.pipeline.build import Build
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.stages import built_wheels
from toolkit.util.errors import ToolkitError


def smoke(b: Build, produced: Produced, require_gpu: bool = False) -> int:
    """Smoke-test the build's wheel; returns the smoke's exit status (0 for a dry run, which made no wheel)."""
    if b.options.dry_run:
        return 0
    settings = b.recipe.smoke
    if settings is None:
        raise ToolkitError(f"recipe {b.recipe.name} has no [smoke] section ({b.recipe.file})",
                           hint="add [smoke] (what to install beside the wheel, env, expected log lines)")
    wheels = built_wheels(b)
    toolchain = b.toolchain()
    if toolchain.mingw is None:
        from toolkit.smoke.run import run_smoke

        return run_smoke(wheels, settings, require_gpu=require_gpu)
    from toolkit.smoke.wine import run_wine_smoke

    ort = b.ort_home or b.options.ort_home
    headers = sorted(ort.rglob("onnxruntime_c_api.h")) if ort is not None else []
    if not headers:
        raise ToolkitError(f"the Windows smoke needs ORT's C API headers, and the build has none ({ort})",
                           hint="give the recipe an [ort] package, or --ort-home DIR")
    return run_wine_smoke(wheels[0], settings, mingw=toolchain.mingw, ort_include=headers[0].parent,
                          cache=b.fetch.cache.root)
