"""AMD's real umbrella tree released in the build root's image with podman: one entry, twice, each in a fresh
container without network and with its own build folder; the dist folders must check and be byte-identical."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.release_image import ENTRY, release_in_container, toolkit_cli
from tests.support.tools import ROOT, require_tool
from toolkit.release import sbom
from toolkit.release.reproducible import source_date_epoch


@pytest.fixture(scope="module")
def two_releases(root_image, tmp_path_factory):
    from tests.support.real_umbrella_support import MIRROR

    require_tool(MIRROR.is_dir(), f"the upstream mirror {MIRROR} is not there")
    epoch = source_date_epoch(ROOT)
    first, cold, _ = release_in_container(tmp_path_factory.mktemp("release-a"), epoch)
    second, warm, log = release_in_container(tmp_path_factory.mktemp("release-b"), epoch)
    print(f"release {ENTRY} in {root_image}: first run {cold:.0f} s, second run {warm:.0f} s")
    return first, second, log


def test_dist_folder_checks_with_sha256sum(two_releases):
    first = two_releases[0]
    proc = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=first, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = sorted(p.name for p in first.iterdir())
    wheels = [n for n in names if n.endswith(".whl")]
    assert len(wheels) == 1 and "+glibc2.28.hipdnn-py3-none-manylinux" in wheels[0], names
    assert names == sorted([wheels[0], wheels[0] + ".cdx.json", "provenance.json", "SHA256SUMS"])


def test_sbom_is_cyclonedx_and_lists_what_the_wheel_is_built_from(two_releases):
    first = two_releases[0]
    path = next(first.glob("*.cdx.json"))
    text = path.read_text()
    sbom.validate(text, path.name)
    document = json.loads(text)
    by_role: dict[str, list[dict]] = {}
    for component in document["components"]:
        props = {p["name"]: p["value"] for p in component.get("properties", [])}
        by_role.setdefault(props.get("toolkit:role", props.get("toolkit:provided-by", "file")), []).append(component)
    deps = {c["name"]: c for c in by_role["fetchcontent (compiled in)"]}
    assert set(deps) == {"absl", "flatbuffers", "fmt", "gsl", "json", "onnx", "protobuf", "range-v3", "zlib"}
    assert deps["protobuf"]["version"] == "34.1" and deps["fmt"]["version"] == "12.1.0"
    for dep in deps.values():
        props = {p["name"]: p["value"] for p in dep["properties"]}
        assert len(props["toolkit:tree-sha256"]) == 64, dep
    patches = [c["name"] for c in by_role["patch"]]
    assert patches and all(name.endswith(".patch") for name in patches)
    assert {"libamdhip64.so.6", "libmigraphx_c.so.3"} <= set(sbom.external_libraries(document, "rocm"))
    [source] = by_role["source"]
    assert source["version"] == "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22"


def test_second_run_in_a_fresh_container_is_byte_identical(two_releases):
    first, second, log = two_releases
    compared = toolkit_cli("release-compare", str(first), str(second))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert (first / "SHA256SUMS").read_bytes() == (second / "SHA256SUMS").read_bytes()
    assert "identical" in compared.stdout
    assert "repair: done" in log or "wrote 1 wheel(s)" in log
