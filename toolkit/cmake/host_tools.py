"""Programs a cross build runs while it builds, built for the build machine first.

A Windows build of a tree with ONNX runs protoc to generate ONNX's sources; the protoc it cross-builds is a Windows
program. The toolkit builds the recipe's `host_tool` target of the same verified dependency source with this
machine's compiler (the toolchain's clang, without a target), in `host/<name>` of the work tree, answering that
build's own FetchContent requests from the same dependency provider (protobuf's abseil), and hands the program's
path to the tree through the define the recipe names. Rebuilt only when the source or the build's inputs change
(CMake and Ninja decide), compiled through ccache where the machine has it.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from toolkit.cmake.commands import configure_command
from toolkit.recipe.sources import FetchContentDep, HostTool
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run_tool


def host_tool_path(work: Path, dep: FetchContentDep, tool: HostTool) -> Path:
    """Where the program is once built: CMake's default runtime folder, the top of the dependency's build."""
    return work / "host" / dep.name.lower() / tool.target


def build_host_tool(dep: FetchContentDep, tool: HostTool, source: Path, work: Path, *, cmake: Path, ninja: Path,
                    compilers: Mapping[str, str], provider: Mapping[str, str], env: Mapping[str, str]) -> Path:
    """Configure and build `tool.target` of the dependency at `source` for this machine; returns the program."""
    binary = work / "host" / dep.name.lower()
    defines = {"CMAKE_BUILD_TYPE": "Release", "CMAKE_C_COMPILER": compilers["C"],
               "CMAKE_CXX_COMPILER": compilers["CXX"], **provider, **tool.defines}
    ccache = shutil.which("ccache")
    if ccache:
        defines |= {"CMAKE_C_COMPILER_LAUNCHER": ccache, "CMAKE_CXX_COMPILER_LAUNCHER": ccache}
    logs = work / "logs"
    what = f"host-{dep.name.lower()}"
    run_tool(configure_command(cmake, source, binary, "Ninja", ninja, defines), f"{what}-configure", dict(env), logs)
    run_tool([str(cmake), "--build", str(binary), "--target", tool.target], f"{what}-build", dict(env), logs)
    program = host_tool_path(work, dep, tool)
    if not program.is_file():
        raise ToolkitError(f"fetchcontent {dep.name}: building host_tool {tool.target!r} left no {program}",
                           hint=f"check the target name in the recipe's [[fetchcontent]] {dep.name} host_tool")
    return program
