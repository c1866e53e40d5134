"""What the stages derive from a settled build, each by calling its area's function with the build's facts: the
defines (toolkit/cmake/defines.py), the patch selection (toolkit/patching), the build facts
(toolkit/wheel/facts.py), the kernels' HIP toolchain and the environment of the tools a stage runs."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from toolkit import patching
from toolkit.binary.hip import HipToolchain, NoHip, find_hip
from toolkit.cmake import defines as cmake_defines
from toolkit.cmake.commands import compiler_launcher
from toolkit.pipeline.build import Build
from toolkit.recipe import features as feat
from toolkit.sources.fetchcontent import handover_defines
from toolkit.wheel.facts import BuildFacts, build_facts


def defines(b: Build) -> dict[str, str]:
    return cmake_defines.combine(
        b.recipe.build, dependencies=b.deps.cmake_defines(b.ort_home or b.planned_ort_home()),
        fetchcontent=handover_defines(b.workspace.root / "deps", b.workspace.cmake),
        features=feat.cmake_defines(b.recipe, b.resolved_features()),
        gpu_targets=b.options.gpu_targets, toolchain=b.toolchain().defines(b.toolchain_dir))


def active_patches(b: Build, phase: str) -> list[patching.SeriesEntry]:
    """The series entries of `phase` this feature set applies: only these count, so a feature no patch
    depends on does not re-patch (and so rebuild) the tree."""
    series = b.series
    return series.select(phase, b.enabled())[0] if series is not None else []


def patch_pins(b: Build, phase: str = "base") -> list[tuple[str, str]]:
    return patching.pins(active_patches(b, phase))


def kernels_dir(b: Build) -> Path:
    """Where the hipified sources the later stages read are: hipify's output, or its patched copy."""
    return b.workspace.hipified_patched if active_patches(b, "hipified") else b.workspace.hipified


def kernel_toolchain(b: Build) -> tuple[HipToolchain | None, str]:
    """The HIP toolchain that compiles the hipified kernels, or None and why they are skipped."""
    if b.hipify is None:
        return None, "no [hipify] in the recipe"
    if not b.options.gpu_targets:
        return None, "GPU kernels skipped: no --gpu-targets given (e.g. --gpu-targets gfx90a,gfx1030)"
    toolchain = find_hip(str(b.options.rocm_path) if b.options.rocm_path else None)
    if isinstance(toolchain, NoHip):
        return None, f"GPU kernels skipped: {toolchain.reason}"
    return toolchain, ""


def facts(b: Build, defines: dict[str, str], source_digest: str) -> BuildFacts:
    """What the wheel records about its build: source revision, patches, features, ROCm, GPU targets, and
    the C/C++ toolchain (its identity: for zig, the pinned version, target and wheel sha256). `defines` are the
    configure's, `source_digest` the source stage's digest of the tree: the configure stage calls this once a run
    and hands the facts on (pipeline/produced.py)."""
    toolchain, _ = kernel_toolchain(b)
    targets = b.recipe.build.gpu_targets_define
    # The tree's own targets variable ([build] gpu_targets_define), or what the hipified kernels compile for.
    gpu_targets = ([t for t in defines.get(targets, "").split(";") if t] if targets else
                   list(b.options.gpu_targets) if toolchain else [])
    return build_facts(source=b.source, source_dir=b.source_dir, source_digest=source_digest,
                       patch_pins=patch_pins(b), features=sorted(b.enabled()),
                       kernel_hip=(toolchain.version, toolchain.kind) if toolchain else None,
                       cmake_dir=b.workspace.cmake, rocm_prefixes=tuple(p for p in (b.options.rocm_path,) if p),
                       gpu_targets=gpu_targets, toolchain=b.toolchain().identity())


def ccache_env(b: Build) -> dict[str, str]:
    """ccache's store in the toolkit cache, paths under the work tree made relative: a fresh build folder
    (or a second worktree) hits what an earlier build compiled. Settings the caller made (its environment,
    the build's `env`) win."""
    if compiler_launcher() is None:
        return {}
    from toolkit.buildroot.sandbox import ccache_dir

    wanted = {"CCACHE_DIR": str(ccache_dir(b.fetch.cache.root)), "CCACHE_BASEDIR": str(b.workspace.root),
              "CCACHE_NOHASHDIR": "true", **b.toolchain().ccache_env()}
    return {k: v for k, v in wanted.items() if k not in os.environ and k not in b.env}


@contextlib.contextmanager
def tool_env(b: Build) -> Iterator[dict[str, str]]:
    """The environment of a CMake configure or build step: ccache's, and a TMPDIR in the work tree made for
    the step and removed after it, so that what the compilers leave behind is neither outside the work tree
    nor kept (HIP's clang driver leaves two empty folders in TMPDIR per compile). git stops at the work tree: a
    tree that asks git for its own commit (hip-ep's version info) gets no answer rather than the commit of a
    checkout the build folder happens to sit in (the toolkit's own)."""
    tmp = b.workspace.tmp
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    ceilings = os.pathsep.join(p for p in (str(b.workspace.root), os.environ.get("GIT_CEILING_DIRECTORIES")) if p)
    try:
        yield {**ccache_env(b), **b.env, "TMPDIR": str(tmp), "GIT_CEILING_DIRECTORIES": ceilings}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
