"""The check stage: the built libraries export exactly what the recipe says, link what they must, and carry
code objects for exactly the GPU targets the build facts record."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from toolkit.binary.library import read_library
from toolkit.binary.offload_bundle import gpu_targets
from toolkit.binary.pe import read_pe
from toolkit.binary.windows import describe_imports, import_problems, reproducibility_problems
from toolkit.pipeline.adapters.outputs import check_needed
from toolkit.pipeline.build import Build
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.errors import CheckFailed


def check_stage(b: Build, produced: Produced) -> Stage:
    def expected_targets() -> list[str]:
        return produced.configure("check").facts["gpu_targets"]

    def run() -> None:
        check_exports(b)
        check_needed(b)
        if b.toolchain().platform == "windows":
            check_windows_dlls(b)
        check_code_objects(b, expected_targets())

    def plan() -> list[str]:
        targets = ", ".join(expected_targets()) or "none"
        return [f"{b.library_file(n)} must export exactly {', '.join(e)}" for n, e in b.expected() if e] + [
            f"offload bundles must hold exactly these GPU targets: {targets}"]

    return Stage("check", lambda: {"expected": b.expected(), "gpu_targets": expected_targets(),
                                   "platform": b.toolchain().platform}, [], run, plan)


def _is_pattern(entry: str) -> bool:
    return any(c in entry for c in "*?[")


def export_mismatch(found: list[str], exports: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(exported but neither named nor matched by a glob, named but not exported)."""
    patterns = [e for e in exports if _is_pattern(e)]
    extra = sorted(s for s in found if s not in exports and not any(fnmatch.fnmatchcase(s, p) for p in patterns))
    return extra, sorted(set(exports) - set(found) - set(patterns))


def check_exports(b: Build) -> None:
    """Every symbol the library exports is one of `exports` (an entry with * ? [ is a glob, as a version script's
    `global:` patterns are), and every plain entry is exported."""
    for name, exports in b.expected():
        path = b.workspace.lib / b.library_file(name)
        found = list(read_library(path).defined)
        extra, missing = export_mismatch(found, exports)
        if exports and (extra or missing):
            raise CheckFailed(
                f"{path} exports {len(found)} symbol(s), expected exactly {sorted(exports)}"
                + (f"; unexpected: {_some(extra)}" if extra else "") + (f"; missing: {missing}" if missing else ""),
                hint=_exports_hint(b, extra),
            )
        log.stage("check", f"{path.name}: exports {_some(sorted(found))}")


def check_windows_dlls(b: Build) -> None:
    """A DLL imports only Windows' own DLLs, the ones built beside it and the ones an [[outputs]] needs names (its
    wheel carries them), and has no link time or debug directory that would make two builds differ."""
    own = [b.library_file(n) for n, _ in b.expected()] + [n for o in b.recipe.outputs for n in o.needs]
    for file in b.built_libraries():
        path = b.workspace.lib / file
        facts = read_pe(path)
        wrong = import_problems(facts, own)
        if wrong:
            raise CheckFailed(f"{path} imports {'; '.join(wrong)}",
                              hint="a plugin EP DLL loads in any process with ONNX Runtime, where only Windows' own "
                                   "DLLs and what its wheel carries are found")
        differs = reproducibility_problems(facts)
        if differs:
            raise CheckFailed(f"{path}: {'; '.join(differs)}", hint="two builds of the same sources must give the "
                                                                     "same bytes")
        log.stage("check", f"{path.name}: imports {describe_imports(facts.imports)}; no link time, no debug "
                           "directory")


def _some(names: list[str], shown: int = 12) -> str:
    """The first names and how many more: a library whose version script exports C++ APIs has thousands."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _exports_hint(b: Build, extra: list[str]) -> str:
    """Linker-made section bounds (__start_SEC/__stop_SEC) have a fix of their own: they are no entry points."""
    sections = sorted({name.split("_", 3)[3] for name in extra if name.startswith(("__start_", "__stop_"))})
    if sections and len(sections) * 2 >= len(extra):
        return (f"{', '.join(extra)} are the linker's bounds of section(s) {', '.join(sections)}, which lld exports: "
                f"list them in [build] hide_section_bounds of {b.recipe.file} (the zig toolchain then keeps them "
                "hidden)")
    return "the library's version script should export only the plugin EP entry points"


def uncarried_targets(expected: list[str], carried: Iterable[list[str]]) -> list[str]:
    """The expected GPU targets no library carries: each target is in some library, one fat library or one library
    per target (hip-ep's custom_kernels_<target>)."""
    return sorted(set(expected) - {t for found in carried for t in found})


def check_code_objects(b: Build, expected: list[str]) -> None:
    """The offload bundles of the built libraries must hold exactly the GPU targets the build facts record
    (`expected`: the wheel's facts are these), no fewer and no more, together: a stale CMake cache shows up here."""
    # The CMake variable that says the targets: the tree's own ([build] gpu_targets_define), else the kernels'.
    variable = b.recipe.build.gpu_targets_define or "GPU_TARGETS"
    carried = {path: gpu_targets(path) for path in sorted(b.workspace.lib.glob("*.so"))}
    carried = {path: found for path, found in carried.items() if found}
    for path, found in carried.items():
        extra = sorted(set(found) - set(expected))
        if extra:
            said = f"--gpu-targets {','.join(expected)}" if expected else "no GPU targets"
            raise CheckFailed(f"{path} carries code objects for {', '.join(found)}, but the build facts "
                               f"record {said}: {', '.join(extra)} should not be there",
                               hint=f"{variable} in {b.workspace.cmake / 'CMakeCache.txt'} disagrees with the "
                                    "build; rerun the build with --force")
        log.stage("check", f"{path.name}: code objects for {', '.join(found)}")
    if expected and not carried:
        raise CheckFailed(f"no library in {b.workspace.lib} carries GPU code objects, though --gpu-targets "
                           f"{','.join(expected)} was given")
    missing = uncarried_targets(expected, carried.values())
    if carried and missing:
        shown = "; ".join(f"{p.name}: {', '.join(f)}" for p, f in carried.items())
        raise CheckFailed(f"no library carries code objects for {', '.join(missing)} ({shown})",
                           hint=f"check {variable} in the CMake cache and the HIP compiler's supported targets")


STAGE = StageSpec("check", "the libraries export exactly the entry points, link what they must, carry the GPU targets",
                  make=check_stage)
