"""The debian-sid-rocm build root (made once per machine, cached; or TOOLKIT_BUILDROOT's): the ROCm stack
the real builds need is there and runs inside it."""

from __future__ import annotations

import re

from tests.buildroot_support import sid_root  # noqa: F401  (fixture)
from toolkit.buildroot import record, run_in_root


def test_hipcc_is_clang_21(sid_root):
    proc = run_in_root(sid_root, ["hipcc", "--version"], capture=True)
    assert re.search(r"^HIP version: 6\.4\.", proc.stdout, re.M), proc.stdout
    assert re.search(r"clang version 21\.", proc.stdout), proc.stdout


def test_migraphx_and_ort_cmake_configs(sid_root):
    configs = sorted(p.relative_to(sid_root).as_posix() for p in sid_root.glob("usr/lib/*/cmake/*/*-config.cmake"))
    names = {c.rsplit("/", 1)[1] for c in configs}
    assert {"migraphx-config.cmake", "hip-config.cmake"} <= names, configs
    assert list(sid_root.glob("usr/lib/*/cmake/onnxruntime/onnxruntimeConfig.cmake")) or \
        "onnxruntime-config.cmake" in names, configs


def test_root_has_the_packages_the_set_asks_for(sid_root):
    from toolkit.buildroot import packageset

    installed = record.query(sid_root)
    missing = set(packageset.load("debian-sid-rocm").packages) - set(installed)
    assert not missing, f"{sid_root} lacks {sorted(missing)}"
    assert installed["libonnxruntime-dev"].startswith("1.27.")
