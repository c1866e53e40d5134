"""The bundled sample built on the host with the zig toolchain (`build --toolchain zig`), packaged, repaired and
smoke-tested as `nox -s smoke -- --toolchain zig` does: a manylinux_2_28-or-lower wheel whose libc++-static
umbrella registers with PyPI's onnxruntime, forwards the WebGPU plugin EP's factory, and loads in
onnxruntime-genai."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile

from tests.support.tools import ROOT
from toolkit.binary.elf import highest_version, version_needs


def test_sample_built_with_zig_repairs_to_manylinux_2_28_and_smokes(tmp_path):
    build_dir = tmp_path / "build"
    proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "--toolchain", "zig", "--smoke",
                           "--build-dir", str(build_dir)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "toolchain: zig 0.17.1" in output and "SMOKE PASS" in output and "GENAI PASS" in output
    wheels = sorted((build_dir / "amdgpu-ep" / "release" / "wheelhouse").glob("*.whl"))
    assert len(wheels) == 1 and wheels[0].name.startswith("onnxruntime_ep_amdgpu_sample-0.1.0-py3-none-")
    tags = re.findall(r"manylinux_(\d+)_(\d+)_x86_64", wheels[0].name)
    assert tags and all((int(a), int(b)) <= (2, 28) for a, b in tags), wheels[0].name
    report = subprocess.run([sys.executable, "-m", "toolkit", "inspect", str(wheels[0])], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert re.findall(r"highest symbol versions: GLIBC 2\.\d+, GLIBCXX none", report) and "GLIBCXX 3" not in report
    assert "toolchain: zig 0.17.1 for x86_64-linux-gnu.2.28" in report
    with zipfile.ZipFile(wheels[0]) as archive:
        for name in (n for n in archive.namelist() if n.endswith(".so")):
            library = archive.extract(name, tmp_path / "unpacked")
            needs = version_needs(library)
            glibc = highest_version(needs, "GLIBC")
            assert glibc and tuple(map(int, glibc.split("."))) <= (2, 28) and not highest_version(needs, "GLIBCXX")
