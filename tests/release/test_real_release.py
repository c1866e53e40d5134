"""AMD's real umbrella tree released for both ROCm variants by one `release` on the host: each entry in a fresh
container of its own build root (rocm6: debian-sid-rocm, rocm7: debian-sid-rocm7) without network, twice,
each run with its own build folder. One dist folder holds both wheels and the meta-package; it checks, the two runs
are byte-identical, and published to a real index, pip resolves the meta-package to exactly the rocm7 wheel and the
rocm6 variant by its own name."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from urllib.parse import unquote

import pytest

from tests.support.flavours import pip_env
from tests.support.package_index import package_index
from tests.support.release_image import ENTRIES, release_on_host, toolkit_cli
from tests.support.tools import ROOT, require_tool
from toolkit.recipe import packageset
from toolkit.release import sbom
from toolkit.release.reproducible import source_date_epoch


@pytest.fixture(scope="module")
def two_releases(release_roots, tmp_path_factory):
    from tests.support.real_umbrella_support import MIRROR

    require_tool(MIRROR.is_dir(), f"the upstream mirror {MIRROR} is not there")
    epoch = source_date_epoch(ROOT)
    first, cold, _ = release_on_host(tmp_path_factory.mktemp("release-a"), epoch)
    second, warm, log = release_on_host(tmp_path_factory.mktemp("release-b"), epoch)
    print(f"release {', '.join(ENTRIES)}: first run {cold:.0f} s, second run {warm:.0f} s")
    return first, second, log


def _wheels(folder):
    return sorted(p.name for p in folder.glob("*.whl"))


def test_one_dist_folder_holds_both_variants_and_the_meta_package(two_releases):
    first = two_releases[0]
    proc = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=first, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = _wheels(first)
    assert len(wheels) == 3, wheels
    rocm6, rocm7 = (next(w for w in wheels if w.startswith(f"onnxruntime_ep_amdgpu_{v}-")) for v in ("rocm6", "rocm7"))
    # glibc2.28 is the recipe's public label ([release] public): its entries are released under the plain version.
    assert "-0.1.0-py3-none-manylinux" in rocm6 and "-0.1.0-py3-none-manylinux" in rocm7
    assert "onnxruntime_ep_amdgpu-0.1.0-py3-none-any.whl" in wheels
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted([*wheels, rocm6 + ".cdx.json", rocm7 + ".cdx.json", "provenance.json", "SHA256SUMS"])


@pytest.mark.parametrize("variant, root", [("rocm6", "debian-sid-rocm"), ("rocm7", "debian-sid-rocm7")])
def test_sbom_names_the_rocm_the_root_and_what_the_wheel_is_built_from(two_releases, variant, root):
    first = two_releases[0]
    path = next(first.glob(f"onnxruntime_ep_amdgpu_{variant}-*.cdx.json"))
    text = path.read_text()
    sbom.validate(text, path.name)
    document = json.loads(text)
    props = {p["name"]: p["value"] for p in document["metadata"]["component"]["properties"]}
    assert props["toolkit:build:rocm-variant"] == variant and props["toolkit:build-root"] == root
    assert props["toolkit:build-root:package-set"] == packageset.load(root).digest()
    by_role: dict[str, list[dict]] = {}
    for component in document["components"]:
        cprops = {p["name"]: p["value"] for p in component.get("properties", [])}
        by_role.setdefault(cprops.get("toolkit:role", cprops.get("toolkit:provided-by", "file")), []).append(component)
    deps = {c["name"]: c for c in by_role["fetchcontent (compiled in)"]}
    assert set(deps) == {"absl", "flatbuffers", "fmt", "gsl", "json", "onnx", "protobuf", "range-v3", "zlib"}
    assert deps["protobuf"]["version"] == "34.1" and deps["fmt"]["version"] == "12.1.0"
    assert deps["protobuf"]["licenses"] == [{"expression": "BSD-3-Clause"}]
    assert deps["range-v3"]["licenses"] == [{"expression": "BSL-1.0"}]
    patches = [c["name"] for c in by_role["patch"]]
    assert patches and all(name.endswith(".patch") for name in patches)
    external = set(sbom.external_libraries(document, "rocm"))
    hip = f"libamdhip64.so.{variant.removeprefix('rocm')}"
    assert {hip, "libmigraphx_c.so.3"} <= external and not {"libamdhip64.so.6", "libamdhip64.so.7"} - {hip} & external
    [source] = by_role["source"]
    assert source["version"] == "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22"


def test_provenance_names_each_entrys_root_and_the_meta_package(two_releases):
    statement = json.loads((two_releases[0] / "provenance.json").read_text())
    subjects = {s["name"] for s in statement["subject"]}
    assert "onnxruntime_ep_amdgpu-0.1.0-py3-none-any.whl" in subjects and len(subjects) == 3
    builds = {b["entry"]: b for b in statement["predicate"]["buildDefinition"]["internalParameters"]["builds"]}
    assert set(builds) == set(ENTRIES)
    for entry_id, build in builds.items():
        root = "debian-sid-rocm7" if entry_id.startswith("rocm7") else "debian-sid-rocm"
        assert build["build_root"] == {"name": root, "package_set": packageset.load(root).digest()}
        assert build["rocm_variant"] == entry_id.split("-")[0]
        assert build["tools"]["cmake"]["path"] == "/usr/bin/cmake"   # the image's tools, not the host's


def test_second_run_is_byte_identical(two_releases):
    first, second, log = two_releases
    compared = toolkit_cli("release-compare", str(first), str(second))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert (first / "SHA256SUMS").read_bytes() == (second / "SHA256SUMS").read_bytes()
    assert "identical" in compared.stdout
    assert "in a container of build root debian-sid-rocm7" in log


def _pip_install(where, *args: str) -> set[str]:
    """A fresh venv at `where`, `pip install ARGS` with the machine's pip configuration out of the way: the wheel
    files pip chose (its --report)."""
    venv.create(where, with_pip=False)
    report = where / "report.json"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"), "install", "-q",
                           "--report", str(report), *args], capture_output=True, text=True, env=pip_env(), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {unquote(item["download_info"]["url"].rsplit("/", 1)[-1])
            for item in json.loads(report.read_text())["install"]}


def test_published_to_an_index_each_name_installs_exactly_its_variant(two_releases, tmp_path):
    """The release through the publish path into a real index on 127.0.0.1 (pypiserver, uploads by password); then in
    fresh venvs `pip install --index-url INDEX onnxruntime-ep-amdgpu` installs exactly the meta-package and the rocm7
    wheel, `onnxruntime-ep-amdgpu-rocm6` exactly the rocm6 wheel, and neither brings an ONNX Runtime."""
    dist = two_releases[0]
    wheels = {w: w for w in _wheels(dist)}
    meta = wheels.pop("onnxruntime_ep_amdgpu-0.1.0-py3-none-any.whl")
    rocm6, rocm7 = (next(w for w in wheels if w.startswith(f"onnxruntime_ep_amdgpu_{v}-")) for v in ("rocm6", "rocm7"))
    with package_index(tmp_path / "index", {"releaser": "pw-7f3a9"}) as base:
        published = toolkit_cli("publish", str(dist), "--repository-url", f"{base}/",
                                env={"TWINE_USERNAME": "releaser", "TWINE_PASSWORD": "pw-7f3a9"})
        out = published.stdout + published.stderr
        assert published.returncode == 0, out[-4000:]
        assert "pw-7f3a9" not in out and out.index(meta) > max(out.index(rocm6), out.index(rocm7)), out
        index = ["--index-url", f"{base}/simple/"]
        assert _pip_install(tmp_path / "default", *index, "onnxruntime-ep-amdgpu") == {meta, rocm7}
        assert _pip_install(tmp_path / "rocm6", *index, "onnxruntime-ep-amdgpu-rocm6") == {rocm6}
    # The guide's install from the dist folder itself, as written there (--no-index): the same two wheels.
    assert _pip_install(tmp_path / "folder", "--no-index", "--find-links", str(dist), "onnxruntime-ep-amdgpu") \
        == {meta, rocm7}
