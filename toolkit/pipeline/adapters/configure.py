"""The configure stage: CMake configures the patched tree with every define the toolkit manages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from toolkit.cmake.casefold import forwarding_headers, write_forwarding_headers
from toolkit.cmake.commands import (
    check_cmake_version,
    configure_command,
    configure_fingerprint,
    find_cmake,
    find_ninja,
    read_cache,
)
from toolkit.cmake.host_tools import build_host_tool, host_tool_path
from toolkit.cmake.mingw import MingwPin, casefold_dir
from toolkit.cmake.toolchain import first_link_note, runtime_mark
from toolkit.pipeline.adapters import derive
from toolkit.pipeline.adapters.fetchcontent import deps_root, write_map
from toolkit.pipeline.build import Build
from toolkit.pipeline.produced import Configured, Produced
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.recipe.sources import FetchContentDep, HostTool
from toolkit.sources.fetchcontent import PROVIDER, handover_defines, read_report, source_dir
from toolkit.util import log
from toolkit.util.fsutil import JSON, atomic_write_text, read_json, sha256_file
from toolkit.util.process import run_tool

# Defines the toolkit sets only in some builds, with the value that means "off". CMake keeps a define in
# its cache until it is given again, so each is passed on every configure: without this, a plain build
# after a `--gpu-targets gfx90a` one would still compile gfx90a kernels from the cached GPU_TARGETS.
# CMAKE_HIP_COMPILER is left out on purpose: CMake reads it only when the HIP language is enabled (the
# kernels are on, and then it is passed), and emptying it would make CMake drop the cache when they are
# turned on again. The tree's own variables (its output and kernel folders) come from the recipe's [build].
OFF_DEFINES = {
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


def hip_kernels(b: Build) -> tuple[dict[str, str], dict[str, str], str]:
    """(CMake defines, environment, what happens) for compiling the hipified kernels."""
    toolchain, why_not = derive.kernel_toolchain(b)
    if toolchain is None:
        return {}, {}, why_not
    if b.recipe.build.kernels_define is None:
        return {}, {}, f"GPU kernels skipped: {b.recipe.file} names no [build] kernels_define for the tree to read them"
    kernels = derive.kernels_dir(b)
    defines = dict(toolchain.defines)
    defines[b.recipe.build.kernels_define] = str(kernels)
    defines["GPU_TARGETS"] = ";".join(b.options.gpu_targets)
    what = (f"GPU kernels from {kernels} for {', '.join(b.options.gpu_targets)} with "
            f"{toolchain.kind} HIP {toolchain.version} ({toolchain.compiler})")
    return defines, dict(toolchain.env), what


def configure_defines(b: Build) -> dict[str, str]:
    """Every -D the configure stage passes: recipe, dependencies, features, output folder, GPU kernels.

    Every define the toolkit manages is in it, off ones with their off value, so what a configure does never
    depends on what an earlier one left in the CMake cache.
    """
    settings = b.recipe.build
    # An empty "off" value only clears what an earlier configure left in the cache: passed for a variable no
    # configure set, it would only make CMake warn that the project never read it (ROCM_PATH in the sample).
    cached = read_cache(b.workspace.cmake)
    defines = {name: off for name, off in OFF_DEFINES.items() if off or cached.get(name)}
    defines.update({name: "" for name in (settings.kernels_define, settings.output_dir_define) if name})
    active = {dep.define for dep in b.fetchcontent_deps()}
    defines.update({dep.define: "" for dep in b.recipe.fetchcontent if dep.define not in active})
    defines.update(derive.defines(b))
    if b.recipe.api_check is not None:
        # The api-check stage reads the units CMake will compile, and their include folders, from here.
        defines["CMAKE_EXPORT_COMPILE_COMMANDS"] = "ON"
    # Libraries land in a staging folder; the build stage copies exactly the expected ones to lib/.
    if settings.collect == "output-dir" and settings.output_dir_define:
        defines[settings.output_dir_define] = str(b.workspace.cmake / "out")
    defines.update(hip_kernels(b)[0])
    defines.update({tool.define: str(host_tool_path(b.workspace.root, dep, tool)) for dep, tool in host_tools(b)})
    return defines


def host_tools(b: Build) -> list[tuple[FetchContentDep, HostTool]]:
    """The dependencies' programs this build runs while it builds: a cross build's (toolkit/cmake/host_tools.py)."""
    if b.toolchain().mingw is None:
        return []
    return [(dep, dep.host_tool) for dep in b.fetchcontent_deps() if dep.host_tool is not None]


def build_host_tools(b: Build, cmake: Path, ninja: Path, env: dict[str, str]) -> None:
    pin = b.toolchain().mingw
    tools = host_tools(b)
    if pin is None or not tools:
        return
    provider = {**handover_defines(deps_root(b), b.workspace.cmake),
                "TOOLKIT_PROVIDER_REPORT": str(b.workspace.root / "host" / "report.txt")}
    compilers = {"C": pin.compiler_path("C"), "CXX": pin.compiler_path("CXX")}
    for dep, tool in tools:
        log.stage("configure", f"building {tool.target} of {dep.name} for this machine: the build runs it")
        build_host_tool(dep, tool, source_dir(deps_root(b), dep), b.workspace.root, cmake=cmake, ninja=ninja,
                        compilers=compilers, provider=provider, env=env)


def configure_stage(b: Build, produced: Produced) -> Stage:
    """CMake configures the tree; the defines it used and the build facts are handed on in `produced`."""
    ws = b.workspace
    cmake, ninja = find_cmake(), find_ninja()
    _, kernel_env, kernel_note = hip_kernels(b)
    # The defines of the last command made (the one that ran, or that the fingerprint or the plan used).
    used: list[dict[str, str]] = []

    def command() -> list[str]:
        used[:] = [configure_defines(b)]
        return configure_command(cmake, ws.source, ws.cmake, b.recipe.build.generator, ninja, used[0],
                                 b.recipe.build.list_defines)

    def inputs() -> JSON:
        # The tools' identity, not their paths: each nox session or venv has its own copy of CMake.
        check_cmake_version(cmake)
        return {**configure_fingerprint(command(), [cmake, ninja], ws.cmake), "env": kernel_env,
                "provider": sha256_file(PROVIDER), "toolchain": b.toolchain().identity()}

    def run() -> None:
        toolchain = b.toolchain()
        log.stage("configure", f"toolchain: {toolchain.describe()}")
        log.stage("configure", kernel_note)
        cache = b.fetch.cache.root
        toolchain.prepare(b.toolchain_dir, cache)
        if toolchain.mingw is not None:
            answer_case_spellings(b, toolchain.mingw, casefold_dir(toolchain.toolchain_file(b.toolchain_dir)))
        first_link = first_link_note(toolchain, cache)
        if first_link:
            log.stage("configure", first_link)
        cmd = command()
        write_map(b)
        with derive.tool_env(b) as env:
            build_host_tools(b, cmake, ninja, env)
        if switches_compiler(b):
            # CMake keeps a compiler it detected until its cache is deleted; --fresh starts from no cache.
            log.stage("configure", "the toolchain changed: configuring from a fresh CMake cache")
            cmd.insert(1, "--fresh")
        with derive.tool_env(b) as env:
            run_tool(cmd, "configure", {**kernel_env, **env}, ws.root / "logs")
        ws.configure_record.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(ws.configure_record, json.dumps(cmd) + "\n")
        mark = runtime_mark(toolchain, cache)
        if mark is not None:
            atomic_write_text(mark, "")
        asked = read_report(ws.cmake)
        log.stage("configure", "CMake asked the dependency provider for: FetchContent "
                  + (", ".join(asked["fetchcontent"]) or "none") + "; find_package "
                  + (", ".join(asked["find_package"]) or "none"))

    def plan() -> list[str]:
        cmd = command()
        lines = [f"toolchain {b.toolchain().describe()}"]
        lines += [f"define {k}={v}" for k, v in sorted(used[0].items())]
        lines += [f"env {k}={v}" for k, v in sorted(kernel_env.items())]
        lines += [f"host tool: {tool.target} of {dep.name}, built for this machine first, given as {tool.define}"
                  for dep, tool in host_tools(b)]
        return lines + [kernel_note, "$ " + " ".join(cmd)]

    def done() -> None:
        defines = used[0] if used else configure_defines(b)
        produced.configured = Configured(defines, derive.facts(b, defines, produced.digest("configure")))

    # The record is an output: a work tree configured before it was written configures again, so a release's
    # provenance always has the command that ran.
    outputs = [ws.cmake / "CMakeCache.txt", ws.configure_record, *b.toolchain().outputs(b.toolchain_dir)]
    return Stage("configure", inputs, outputs, run, plan, done)


def answer_case_spellings(b: Build, pin: MingwPin, out: Path) -> None:
    """Forwarding headers for the includes of the tree and its dependencies that Windows' case-insensitive file
    system would find and this one does not (toolkit/cmake/casefold.py)."""
    deps = [source_dir(b.workspace.root / "deps", dep) for dep in b.fetchcontent_deps()]
    roots = [pin.sysroot_include, *deps, *(inc for d in deps for inc in (*d.glob("include"), *d.glob("*/include")))]
    headers = forwarding_headers([b.workspace.source, *deps], roots)
    write_forwarding_headers(out, headers)
    if headers:
        log.stage("configure", f"{len(headers)} includes spelled in another case than the header's name, answered "
                  "by forwarding headers: " + ", ".join(f"{k} -> {v}" for k, v in headers.items()))


def switches_compiler(b: Build) -> bool:
    """Whether the CMake cache holds another compiler than this build's toolchain gives (zig's wrapper for
    another target, or a wrapper where the system's compilers are wanted: CMake would keep the cached one)."""
    cached = read_cache(b.workspace.cmake).get("CMAKE_CXX_COMPILER")
    wanted = b.toolchain().defines(b.toolchain_dir).get("CMAKE_CXX_COMPILER")
    ours = str(b.toolchain_dir) + "/"
    return bool(cached) and cached != wanted and bool(wanted or (cached or "").startswith(ours))


def tree_configure_command(b: Build, binary: Path, extra: Mapping[str, str] | None = None, *,
                           cmake: Path | None = None, ninja: Path | None = None) -> list[str]:
    """The command that configures the build's patched tree into `binary`: the build's defines, `extra` on top
    (the survey's), with the recipe's generator."""
    return configure_command(cmake or find_cmake(), b.workspace.source, binary, b.recipe.build.generator,
                             ninja or find_ninja(), {**configure_defines(b), **(extra or {})},
                             b.recipe.build.list_defines)


STAGE = StageSpec("configure", "CMake configures the patched tree with the features' and the toolkit's defines",
                  make=configure_stage)


def configure_ran(b: Build) -> list[str] | None:
    """The command the work tree's last configure ran (None: it has not configured)."""
    record = b.workspace.configure_record
    if not record.is_file():
        return None
    command = read_json(record)
    return [str(part) for part in command] if isinstance(command, list) else None
