"""Build facts read from what the build used: the upstream commit (a git source's, or the one an archive URL
names), the HIP headers the configure's include folders lead to (none when CMake found no hip), and the ROCm
variant; the same facts in `inspect`, `get_build_info()`, the wheel's description, the SBOM and provenance."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.support.wheel_support import build_c_library, shared_library
from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import SourceSettings
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.release.provenance import build_statement
from toolkit.release.sbom import wheel_sbom
from toolkit.wheel.build import build_wheel
from toolkit.wheel.facts import hip_headers, upstream_commit
from toolkit.wheel.inspection import format_report, inspect_wheel

COMMIT = "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22"
HIP_HEADER = "#define HIP_VERSION_MAJOR {0}\n#define HIP_VERSION_MINOR {1}\n#define HIP_VERSION_PATCH {2}\n"


@pytest.mark.parametrize("source, commit", [
    (SourceSettings(git="https://github.com/onnxruntime/onnxruntime-ep-amdgpu.git", commit=COMMIT), COMMIT),
    (SourceSettings(archive=PinnedArchive(
        f"https://github.com/onnxruntime/onnxruntime-ep-amdgpu/archive/{COMMIT}.tar.gz")), COMMIT),
    (SourceSettings(archive=PinnedArchive("https://github.com/fmtlib/fmt/archive/refs/tags/12.1.0.tar.gz")), None),
    (SourceSettings(path=Path("samples/umbrella-ep")), None),
], ids=["git", "archive-of-a-commit", "archive-of-a-tag", "local-tree"])
def test_upstream_commit(source, commit):
    assert upstream_commit(source) == commit


def _header(prefix: Path, version: tuple[int, int, int]) -> Path:
    header = prefix / "include" / "hip" / "hip_version.h"
    header.parent.mkdir(parents=True)
    header.write_text("#ifndef HIP_VERSION_H\n" + HIP_HEADER.format(*version) + "#endif\n")
    return header


def test_hip_headers_are_the_ones_the_configure_found(tmp_path):
    prefix = tmp_path / "usr"
    header = _header(prefix, (6, 4, 43484))
    cmake = tmp_path / "cmake"
    cmake.mkdir()
    (cmake / "CMakeCache.txt").write_text(f"hip_DIR:PATH={prefix}/lib/x86_64-linux-gnu/cmake/hip\n")
    found = hip_headers(cmake)
    assert (found.version, found.header) == ("6.4.43484", header)
    assert found.describe().startswith(f"HIP 6.4.43484 ({header}")
    # An include folder of the compile itself comes first, as the compiler searches it first.
    other = _header(tmp_path / "rocm7", (7, 2, 26015))
    (cmake / "compile_commands.json").write_text(json.dumps([{
        "directory": str(cmake), "file": "x.cc", "command": f"c++ -I{tmp_path}/rocm7/include -c x.cc"}]))
    (cmake / "CMakeCache.txt").write_text(f"hip_DIR:PATH={prefix}/lib/cmake/hip\n")
    assert (hip_headers(cmake).version, hip_headers(cmake).header) == ("7.2.26015", other)


@pytest.mark.parametrize("cache", ["", "hip_DIR:PATH=hip_DIR-NOTFOUND\n"], ids=["no-hip", "hip-not-found"])
def test_no_hip_in_the_configure_means_no_hip_version(tmp_path, cache):
    # Even where the system has HIP headers (/usr/include/hip here, maybe): a build that did not use HIP has none.
    (tmp_path / "CMakeCache.txt").write_text(cache)
    assert hip_headers(tmp_path) is None
    assert hip_headers(tmp_path / "not-configured") is None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    work = tmp_path_factory.mktemp("facts")
    shared_library(work / "rocm", "libamdhip64.so.7")
    build_c_library(work / "lib" / "libamdgpu-ep.so", libs=[f"-L{work / 'rocm'}", "-l:libamdhip64.so.7"])
    settings = WheelSettings(version="0.1.0", components=(Component("amdgpu-ep", "AMDGPUExecutionProvider"),),
                             rocm_variants=(("rocm6", "libamdhip64.so.6"), ("rocm7", "libamdhip64.so.7")))
    facts = {"source_revision": "upstream@sha256:" + "b" * 64, "upstream_commit": COMMIT,
             "hip_version": "7.2.26015", "rocm_version": "HIP 7.2.26015 (/usr/include/hip/hip_version.h)"}
    return build_wheel(settings, work / "lib", facts, work / "dist")


def test_inspect_and_the_description_name_commit_hip_and_variant(wheel):
    assert wheel.name.startswith("onnxruntime_ep_amdgpu_rocm7-")
    text = format_report(inspect_wheel(wheel))
    assert f"  upstream commit: {COMMIT}\n" in text
    assert "  ROCm version: HIP 7.2.26015 (/usr/include/hip/hip_version.h)\n" in text
    assert "  for ROCm: rocm7 (links libamdhip64.so.7; compiled against HIP 7.2.26015)\n" in text
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith("/METADATA"))).decode()
        info = json.loads(archive.read("onnxruntime_ep_amdgpu/_wheel_info.json"))
        names = archive.namelist()
    assert f"- Upstream commit: {COMMIT}" in metadata
    assert "- For ROCm: rocm7 (links libamdhip64.so.7, compiled against HIP 7.2.26015)" in metadata
    assert info["build"]["rocm_libraries"] == ["libamdhip64.so.7"] and info["build"]["rocm_variant"] == "rocm7"
    assert info["components"][0]["rocm_needed"] == ["libamdhip64.so.7"]
    assert {"onnxruntime_ep_amdgpu/__main__.py", "onnxruntime_ep_amdgpu/_selfcheck.py"} <= set(names)


def test_sbom_and_provenance_carry_the_same_facts(wheel):
    props = {p["name"]: p["value"] for p in wheel_sbom(wheel)["metadata"]["component"]["properties"]}
    assert props["toolkit:build:upstream-commit"] == COMMIT
    assert props["toolkit:build:hip-version"] == "7.2.26015" and props["toolkit:build:rocm-variant"] == "rocm7"
    facts = {"upstream_commit": COMMIT, "hip_version": "7.2.26015", "rocm_variant": "rocm7"}
    statement = build_statement([{"entry": {"id": "e1"}, "wheel": wheel.name, "sha256": "c" * 64, "facts": facts}],
                                {}, None, None)
    build = statement["predicate"]["buildDefinition"]["internalParameters"]["builds"][0]
    assert (build["upstream_commit"], build["hip_version"], build["rocm_variant"]) == (COMMIT, "7.2.26015", "rocm7")
