"""The debian-sid-rocm build root (made once per machine, cached; or TOOLKIT_BUILDROOT's): the ROCm stack
the real builds need is there and runs inside it. Its hipcc, clang and CMake packages are checked beside the
ROCm 7 root's in test_rocm_roots.py."""

from __future__ import annotations

import re

from tests.support.tools import ROOT
from toolkit.buildroot import record, run_in_root


def test_migraphx_and_ort_cmake_configs(sid_root):
    configs = sorted(p.relative_to(sid_root).as_posix() for p in sid_root.glob("usr/lib/*/cmake/*/*-config.cmake"))
    names = {c.rsplit("/", 1)[1] for c in configs}
    assert {"migraphx-config.cmake", "hip-config.cmake"} <= names, configs
    assert list(sid_root.glob("usr/lib/*/cmake/onnxruntime/onnxruntimeConfig.cmake")) or \
        "onnxruntime-config.cmake" in names, configs


def test_root_has_the_packages_the_set_asks_for(sid_root):
    from toolkit.recipe import packageset

    installed = record.query(sid_root)
    missing = set(packageset.load("debian-sid-rocm").packages) - set(installed)
    assert not missing, f"{sid_root} lacks {sorted(missing)}"
    assert installed["libonnxruntime-dev"].startswith("1.27.")


def test_toolkit_command_runs_inside_the_root(sid_root, tmp_path):
    """`container --root` runs the project's toolkit with the root's python3, CMake and Ninja, a
    named host folder (the way a file:// mirror is named) bound at its own path."""
    import os
    import subprocess
    import sys

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "seen.txt").write_text("mirror\n")
    env = {**os.environ, "TOOLKIT_BUILD_DIR": str(tmp_path / "build")}
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "container", "--root", "debian-sid-rocm", "build", "--dry-run",
         "--mirror", f"file://{mirror}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "$ /usr/bin/cmake -S " in proc.stdout and "-DCMAKE_MAKE_PROGRAM=/usr/bin/ninja" in proc.stdout
    assert f"{tmp_path}/build/amdgpu-ep/release" in proc.stdout
    plan = subprocess.run(
        [sys.executable, "-m", "toolkit", "container", "--root", "debian-sid-rocm", "--dry-run", "build",
         "--mirror", f"file://{mirror}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    binds = plan.stdout.splitlines()[0].split("binds: ")[1].split()
    assert binds == [str(ROOT), str(mirror), str(tmp_path / "build")], plan.stdout
    inside = subprocess.run(
        [sys.executable, "-m", "toolkit", "root", "run", "--bind", str(mirror), "--", "sh", "-c",
         f"cmake --version; python3 --version; cat {mirror}/seen.txt"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert inside.returncode == 0, inside.stderr
    assert re.match(r"cmake version 4\.\d+", inside.stdout) and "Python 3.1" in inside.stdout
    assert inside.stdout.endswith("mirror\n")


def test_sample_builds_inside_the_root_with_its_compiler(sid_root, tmp_path):
    """The whole pipeline (patch, hipify, configure, build, check) runs inside the root: the libraries
    are compiled by sid's GCC, not the host's, and land in the host folder given as the build dir."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "TOOLKIT_BUILD_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "toolkit", "container", "--root", "debian-sid-rocm", "build"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lib = tmp_path / "amdgpu-ep/release/lib/libamdgpu-ep.so"
    comment = run_in_root(sid_root, ["readelf", "-p", ".comment", str(lib)], binds=[tmp_path], capture=True).stdout
    host_gcc = subprocess.run(["gcc", "-dumpversion"], capture_output=True, text=True).stdout.strip()
    sid_gcc = run_in_root(sid_root, ["gcc", "-dumpversion"], capture=True).stdout.strip()
    assert sid_gcc != host_gcc and f"GCC: (Debian {sid_gcc}" in comment, comment
