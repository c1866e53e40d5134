"""The defines of one configure, from the parts a build settled; a later part wins over an earlier one: the recipe's
own defines, the dependencies' prefixes, the FetchContent provider, the features' spellings, the tree's GPU
targets variable, the toolchain, the compiler launcher."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from toolkit.cmake.commands import compiler_launcher
from toolkit.recipe.core import BuildSettings


def combine(settings: BuildSettings, *, dependencies: Mapping[str, str], fetchcontent: Mapping[str, str],
                      features: Mapping[str, str], gpu_targets: Sequence[str],
                      toolchain: Mapping[str, str]) -> dict[str, str]:
    defines = dict(settings.defines)
    defines["CMAKE_BUILD_TYPE"] = settings.build_type
    defines.update(dependencies)
    defines.update(fetchcontent)
    defines.update(features)
    if settings.gpu_targets_define and gpu_targets:  # the tree's own GPU targets variable
        defines[settings.gpu_targets_define] = ";".join(gpu_targets)
    defines.update(toolchain)
    launcher = compiler_launcher()
    if launcher:
        defines["CMAKE_C_COMPILER_LAUNCHER"] = launcher
        defines["CMAKE_CXX_COMPILER_LAUNCHER"] = launcher
    return defines
