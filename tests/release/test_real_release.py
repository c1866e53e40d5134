"""AMD's real umbrella tree released for both ROCm variants by one `release` on the host: each entry in a fresh
container of its own build root (rocm6: debian-sid-rocm, rocm7: debian-sid-rocm7) without network, twice,
each run with its own build folder. One dist folder holds both wheels and the meta-package; it checks, the two runs
are byte-identical, and pip resolves each extra of the meta-package to exactly its variant's wheel."""

from __future__ import annotations

import json
import subprocess
import venv

import pytest

from tests.support.release_image import ENTRIES, release_on_host, toolkit_cli
from tests.support.tools import ROOT, require_tool
from toolkit.buildroot import packageset
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
    assert "+glibc2.28.hipdnn-py3-none-manylinux" in rocm6 and "+glibc2.28.hipdnn-py3-none-manylinux" in rocm7
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


@pytest.mark.parametrize("variant", ["rocm6", "rocm7"])
def test_each_extra_installs_exactly_its_variants_wheel(two_releases, tmp_path, variant):
    """`pip install --no-index --find-links dist 'onnxruntime-ep-amdgpu[rocmN]'`: the meta-package and the rocmN
    wheel, nothing of the other variant (the wheels need onnxruntime: a wheel of that name with no code stands in,
    found beside them)."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    python = str(env_dir / "bin" / "python")
    proc = subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(two_releases[0]),
                           f"onnxruntime-ep-amdgpu[{variant}]", "onnxruntime==1.27.1", "--find-links",
                           str(_ort_wheel(tmp_path))], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = subprocess.run([python, "-m", "pip", "list", "--format", "json"], capture_output=True, text=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"onnxruntime-ep-amdgpu", f"onnxruntime-ep-amdgpu-{variant}"} <= names
    other = "rocm7" if variant == "rocm6" else "rocm6"
    assert f"onnxruntime-ep-amdgpu-{other}" not in names, names


def _ort_wheel(folder):
    """A wheel named onnxruntime 1.27.1 with no code: the release wheels' Requires-Dist is met without an index."""
    import zipfile

    out = folder / "ort-wheel"
    out.mkdir()
    info = "onnxruntime-1.27.1.dist-info"
    files = {f"{info}/METADATA": "Metadata-Version: 2.1\nName: onnxruntime\nVersion: 1.27.1\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    with zipfile.ZipFile(out / "onnxruntime-1.27.1-py3-none-any.whl", "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")
    return out
