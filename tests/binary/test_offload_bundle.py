"""Reading GPU targets from clang offload bundles in real hipcc outputs."""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from tests.support.hipify_support import hip_env, require_hipcc
from toolkit.binary.offload_bundle import MAGIC, bundle_data, gpu_targets, read_bundles
from toolkit.util.errors import ToolkitError

KERNEL = """
#include <hip/hip_runtime.h>
__global__ void Twice(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }
extern "C" hipError_t RunTwice(float* x, int n) {
  hipLaunchKernelGGL(Twice, dim3(1), dim3(64), 0, 0, x, n);
  return hipGetLastError();
}
"""


@pytest.fixture(scope="module")
def shared_library(tmp_path_factory) -> Path:
    hipcc = require_hipcc()
    folder = tmp_path_factory.mktemp("bundle")
    (folder / "twice.hip").write_text(KERNEL)
    lib = folder / "libtwice.so"
    cmd = [hipcc, "-x", "hip", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-fPIC", "-shared",
           str(folder / "twice.hip"), "-o", str(lib)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=hip_env())
    assert proc.returncode == 0, proc.stderr
    return lib


def test_shared_library_lists_its_targets(shared_library):
    assert gpu_targets(shared_library) == ["gfx1030", "gfx90a"]
    [bundle] = read_bundles(bundle_data(shared_library))
    assert [e.id for e in bundle][1:] == ["hipv4-amdgcn-amd-amdhsa--gfx1030", "hipv4-amdgcn-amd-amdhsa--gfx90a"]
    assert bundle[0].kind == "host" and bundle[0].target == ""
    data = bundle_data(shared_library)
    for entry in bundle[1:]:
        # Each device entry is an AMDGPU ELF code object.
        assert data[entry.offset:entry.offset + 4] == b"\x7fELF"


def test_standalone_bundle_and_compressed_bundle(shared_library, tmp_path):
    data = bundle_data(shared_library)
    standalone = tmp_path / "twice.hipfb"
    standalone.write_bytes(data)
    assert gpu_targets(standalone) == ["gfx1030", "gfx90a"]
    # A zlib-compressed (CCOB version 2) wrapping of the same bundle reads the same.
    packed = zlib.compress(data)
    header = b"CCOB" + struct.pack("<HHII", 2, 0, 24 + len(packed), len(data)) + struct.pack("<Q", 0)
    compressed = tmp_path / "twice.ccob"
    compressed.write_bytes(header + packed)
    assert gpu_targets(compressed) == ["gfx1030", "gfx90a"]
    # Two bundles back to back (one per translation unit) are both read.
    assert len(read_bundles(data + b"\0" * 16 + data)) == 2


def test_truncated_bundle_is_an_error(shared_library, tmp_path):
    data = bundle_data(shared_library)
    broken = tmp_path / "broken.hipfb"
    broken.write_bytes(data[:200])
    with pytest.raises(ToolkitError, match="broken.hipfb: offload bundle entry runs past the end"):
        gpu_targets(broken)
    broken.write_bytes(MAGIC + b"\x05")
    with pytest.raises(ToolkitError, match="truncated offload bundle"):
        gpu_targets(broken)


def test_host_only_elf_has_no_targets(tmp_path):
    lib = Path("/bin/ls")
    assert gpu_targets(lib) == []
