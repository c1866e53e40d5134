"""`nox -s release -- --only ID` for real: the pipeline builds one matrix entry into a verified release."""

import json
import os
import subprocess
import sys
import zipfile

from tests.support.tools import ROOT, need


def test_release_one_entry_end_to_end(tmp_path):
    need("hipcc", "hipcc libamdhip64-dev rocm-device-libs")
    out = tmp_path / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "release", "--only", "cp311-rdna-hipdnn", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_BUILD_DIR": str(tmp_path / "build")})
    assert proc.returncode == 0, proc.stderr[-4000:]
    wheels = sorted(out.glob("*.whl"))
    assert [w.name for w in wheels] == [
        "onnxruntime_ep_amdgpu_sample_hipdnn-0.1.0+rdna.hipdnn-py3-none-manylinux_2_34_x86_64.whl"] or \
        wheels[0].name.startswith("onnxruntime_ep_amdgpu_sample_hipdnn-0.1.0+rdna.hipdnn-py3-none-manylinux_")
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "onnxruntime_ep_amdgpu/libhipdnn-backend.so" in names
    assert not [n for n in names if "libamdhip64" in n]  # ROCm is never bundled
    assert subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True).returncode == 0

    sbom = json.loads((out / f"{wheels[0].name}.cdx.json").read_text())
    external = [c["name"] for c in sbom["components"] if c.get("isExternal")]
    assert "libamdhip64.so.5" in external

    provenance = json.loads((out / "provenance.json").read_text())
    text = json.dumps(provenance)
    for patch in ("0001-rename-hipep-to-hipdnn.patch", "0002-make-hipdnn-opt-in.patch"):
        assert patch in text
    assert "-DGPU_TARGETS=gfx1030" in text and "-DUSE_HIPDNN=ON" in text
