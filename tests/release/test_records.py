"""run_release on real wheels: gcc-built shared libraries, one linking a (fake, gcc-built) ROCm library.

Checks what a release ships: SBOMs valid against CycloneDX's schema that list the ROCm library as an
external component, SHA256SUMS that `sha256sum -c` accepts, a provenance record with the inputs, and
all-or-nothing publishing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.support.release_wheels import PATCH_SHA, SOURCE_SHA, builder, make_wheel, two_entries
from tests.support.tools import need
from toolkit.release import sbom
from toolkit.release.matrix import Entry
from toolkit.release.orchestrator import run_release
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import sha256_file


@pytest.fixture(scope="module")
def release(release_libs, tmp_path_factory):
    out = tmp_path_factory.mktemp("rel") / "release"
    return run_release(two_entries(), builder(release_libs), out, recipe="recipes/test.toml")


def test_release_writes_wheels_sboms_provenance_and_sums(release):
    names = sorted(p.name for p in release.out_dir.iterdir())
    assert names == sorted([
        "SHA256SUMS", "provenance.json",
        "tinypkg-1.0+cdna-cp311-cp311-linux_x86_64.whl",
        "tinypkg-1.0+cdna-cp311-cp311-linux_x86_64.whl.cdx.json",
        "tinypkg-1.0+cdna.hipdnn-cp311-cp311-linux_x86_64.whl",
        "tinypkg-1.0+cdna.hipdnn-cp311-cp311-linux_x86_64.whl.cdx.json",
    ])
    # no staging folders left beside the output
    assert [p.name for p in release.out_dir.parent.iterdir()] == ["release"]


def test_sha256sums_verifies_with_coreutils(release):
    need("sha256sum")
    proc = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=release.out_dir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(": OK") == 5  # 2 wheels, 2 SBOMs, provenance.json


def test_sha256sum_catches_a_changed_file(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release.out_dir, copy)
    with open(next(copy.glob("*.whl")), "ab") as handle:
        handle.write(b"tampered")
    proc = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=copy, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "FAILED" in proc.stdout


def test_each_sbom_validates_against_cyclonedx_schema(release):
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    validator = JsonStrictValidator(SchemaVersion.V1_7)
    assert len(release.sboms) == 2
    for path in release.sboms:
        assert validator.validate_str(path.read_text()) is None, path


def test_sbom_lists_rocm_library_as_external_and_bundled_library_as_file(release):
    for path in release.sboms:
        doc = json.loads(path.read_text())
        wheel = release.out_dir / path.name.removesuffix(".cdx.json")
        assert doc["metadata"]["component"]["hashes"] == [{"alg": "SHA-256", "content": sha256_file(wheel)}]
        assert doc["metadata"]["component"]["purl"].startswith("pkg:pypi/tinypkg@1.0+cdna")
        external = {c["name"]: c for c in doc["components"] if c.get("isExternal")}
        assert set(external) == {"libamdhip64.so.6", "libm.so.6"}
        props = {p["name"]: p["value"] for p in external["libamdhip64.so.6"]["properties"]}
        assert props == {"toolkit:provided-by": "rocm", "toolkit:exclude-pattern": "libamdhip64.so.*"}
        assert sbom.external_libraries(doc, "rocm") == ["libamdhip64.so.6"]
        assert sbom.external_libraries(doc, "system") == ["libm.so.6"]
        # every file of the wheel is listed with its hash; the extension depends on the bundled copy
        files = {c["name"]: c for c in doc["components"] if c["bom-ref"].startswith("file:")}
        # the patches the build applied are files too, but build inputs, not shipped
        assert {c["name"] for c in doc["components"] if c["bom-ref"].startswith("patch:")} == {
            c["name"] for c in doc["components"] if c["type"] == "file" and c.get("scope") == "excluded"}
        with zipfile.ZipFile(wheel) as zf:
            assert set(files) == set(zf.namelist())
            data = zf.read("tinypkg.libs/libfoo.so.1")
        assert files["tinypkg.libs/libfoo.so.1"]["hashes"][0]["content"] == hashlib.sha256(data).hexdigest()
        deps = {d["ref"]: d.get("dependsOn", []) for d in doc["dependencies"]}
        assert deps["file:tinypkg/_ext.so"] == sorted(
            ["external:libamdhip64.so.6", "external:libm.so.6", "file:tinypkg.libs/libfoo.so.1"])


def test_sbom_matrix_properties_name_the_entry(release):
    doc = json.loads(release.sboms[1].read_text())
    props = {p["name"]: p["value"] for p in doc["metadata"]["component"]["properties"]}
    assert props["toolkit:matrix:entry"] == "cp311-cdna-hipdnn"
    assert props["toolkit:matrix:gpu-targets"] == "gfx90a;gfx942"
    assert props["toolkit:wheel:tag"] == "cp311-cp311-linux_x86_64"


def test_provenance_records_inputs_outputs_toolchain_and_commands(release):
    statement = json.loads(release.provenance.read_text())
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    assert subjects == {w.name: sha256_file(w) for w in release.wheels}
    definition = statement["predicate"]["buildDefinition"]
    deps = {d["name"]: d["digest"]["sha256"] for d in definition["resolvedDependencies"]}
    assert deps == {"umbrella-ep": SOURCE_SHA, "0001-rename-hipep-to-hipdnn.patch": PATCH_SHA}
    toolchain = definition["internalParameters"]["toolchain"]
    assert toolchain["cmake"]["version"].startswith("cmake version ")
    assert toolchain["python"]["version"].startswith("Python 3.")
    builds = definition["internalParameters"]["builds"]
    assert [b["entry"] for b in builds] == ["cp311-cdna", "cp311-cdna-hipdnn"]
    assert builds[0]["commands"][0] == "cmake -S src -B build '-DGPU_TARGETS=gfx90a;gfx942'"
    assert [e["id"] for e in definition["externalParameters"]["entries"]] == ["cp311-cdna", "cp311-cdna-hipdnn"]


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: sha256_file(p) for p in folder.iterdir()}


def test_failed_entry_leaves_previous_release_untouched(release_libs, tmp_path):
    out = tmp_path / "release"
    entries = two_entries()
    run_release(entries[:1], builder(release_libs), out, toolchain={})
    before = _snapshot(out)
    calls = []

    def failing(entry, work):
        if entry.id.endswith("hipdnn"):
            raise ToolkitError(f"build of {entry.id} failed")
        return builder(release_libs, calls)(entry, work)

    with pytest.raises(ToolkitError, match="build of cp311-cdna-hipdnn failed"):
        run_release(entries, failing, out, toolchain={})
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]


def test_source_without_checksum_is_refused(release_libs, tmp_path):
    bad = builder(release_libs, facts_override={"sources": [{"name": "umbrella-ep", "uri": "https://x.invalid/a.tgz"}]})
    with pytest.raises(ToolkitError, match="source 'umbrella-ep' has no valid sha256"):
        run_release(two_entries(), bad, tmp_path / "release", toolchain={})
    assert not (tmp_path / "release").exists()


def test_refuses_to_replace_a_folder_it_did_not_write(release_libs, tmp_path):
    out = tmp_path / "dist"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ToolkitError, match="not a release folder"):
        run_release(two_entries(), builder(release_libs), out, toolchain={})
    assert (out / "notes.txt").read_text() == "mine"


def test_two_entries_with_the_same_wheel_name_are_an_error(release_libs, tmp_path):
    entries = two_entries()
    same = [entries[0], Entry("cp311-other", "3.11", "cdna", ("gfx90a",), ())]
    with pytest.raises(ToolkitError, match="both produced tinypkg-1.0"):
        run_release(same, builder(release_libs), tmp_path / "release", toolchain={})


def test_not_a_wheel_is_reported_with_its_path(tmp_path):
    junk = tmp_path / "junk.whl"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ToolkitError, match="junk.whl: not a readable wheel"):
        sbom.read_wheel(junk)


def test_same_wheel_gives_same_sbom_with_source_date_epoch(release_libs, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    wheel = make_wheel(release_libs, tmp_path, two_entries()[0])
    first, second = sbom.wheel_sbom(wheel), sbom.wheel_sbom(wheel)
    assert first == second
    assert first["metadata"]["timestamp"] == "2023-11-14T22:13:20Z"


def test_release_command_builds_with_the_shared_cache_env(release_libs, tmp_path, monkeypatch):
    """The CLI path: recipe -> matrix -> injected build function, with the compile cache in the env."""
    need("ccache")
    from toolkit.cli import main as cli
    from toolkit.release import make_release

    recipe = tmp_path / "r.toml"
    recipe.write_text('[recipe]\nname = "r"\n[release]\npython = ["3.12"]\n[[release.target_set]]\nname = "cdna"\n'
                      'targets = ["gfx90a"]\n')
    seen = {}

    def pipeline_builder(recipe_path, *, env, **_):
        def build(entry, work):
            seen[entry.id] = (env.get("CCACHE_REMOTE_STORAGE"), env.get("CMAKE_CXX_COMPILER_LAUNCHER"))
            return builder(release_libs)(entry, work)

        return build

    monkeypatch.setattr(make_release, "pipeline_builder", pipeline_builder)
    monkeypatch.setenv("TOOLKIT_COMPILE_CACHE", "redis://127.0.0.1:6390")
    monkeypatch.delenv("CCACHE_REMOTE_STORAGE", raising=False)
    out = tmp_path / "out"
    assert cli.main(["release", "--recipe", str(recipe), "--out", str(out)]) == 0
    assert seen == {"cp312-cdna": ("redis://127.0.0.1:6390", shutil.which("ccache"))}
    assert "CCACHE_REMOTE_STORAGE" not in os.environ  # given to the build, never set on this process
    assert subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True).returncode == 0


def test_a_dependency_compiled_in_carries_its_license_and_one_only_read_is_excluded():
    facts = {"fetchcontent": [
        {"name": "fmt", "url": "https://github.com/fmtlib/fmt/archive/refs/tags/12.1.0.tar.gz", "version": "12.1.0",
         "content": "a" * 64, "license": "MIT"},
        {"name": "directml", "url": "pypi:onnxruntime_directml-1.24.4-cp312-cp312-win_amd64.whl",
         "version": "1.24.4", "content": "b" * 64, "in_wheel": False}]}
    fmt, directml = sbom.input_components(facts)
    assert fmt["licenses"] == [{"expression": "MIT"}] and fmt["scope"] == "required"
    assert {"name": "toolkit:role", "value": "fetchcontent (compiled in)"} in fmt["properties"]
    assert "licenses" not in directml and directml["scope"] == "excluded"
    assert {"name": "toolkit:role", "value": "fetchcontent (read by the build)"} in directml["properties"]
    document = {"bomFormat": "CycloneDX", "specVersion": sbom.SPEC_VERSION, "version": 1, "components": [fmt, directml]}
    sbom.validate(json.dumps(document), "the test's SBOM")
