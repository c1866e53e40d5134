"""`publish` refuses, before the first upload, what the index would refuse (toolkit/release/index_rules.json): on
PyPI a `linux_*` platform tag, a file over its size limit, a local version and a wheel without its license; each
refusal one error line naming the file and the rule. Real wheels, a real pypiserver on 127.0.0.1."""

from __future__ import annotations

import os
import zipfile

import pytest

from tests.support.package_index import LICENSE_TEXT, metadata_wheel, package_index, release_dist
from tests.support.publishing import META, PASSWORD, SETTINGS, USER, VARIANTS, error_line, index_files, run_publish
from toolkit.release import checksums

PYPI = "https://upload.pypi.org/legacy/"
CREDS = {"TWINE_USERNAME": USER, "TWINE_PASSWORD": PASSWORD}


def _dist_with(tmp_path, **wheel):
    """A release's dist folder whose first variant is replaced by a wheel made with `wheel`'s arguments."""
    dist = release_dist(tmp_path / "dist", SETTINGS)
    for old in dist.glob(f"{VARIANTS[0].replace('-', '_')}-*.whl"):
        old.unlink()
    made = metadata_wheel(dist, VARIANTS[0], SETTINGS.version, **wheel)
    checksums.write(dist, [p.name for p in dist.iterdir() if p.name != checksums.FILENAME])
    return dist, made


@pytest.fixture
def index(tmp_path):
    with package_index(tmp_path / "index", {USER: PASSWORD}) as base:
        yield base


def test_a_linux_tag_is_refused_for_pypi_and_taken_by_an_index_of_your_own(tmp_path, index):
    dist, wheel = _dist_with(tmp_path, tag="py3-none-linux_x86_64")
    said = error_line(run_publish(dist, PYPI, "--dry-run"), f"{wheel}: platform tag linux_x86_64, which PyPI refuses "
                       "(rule: platform tags); nothing was uploaded", "hint: PyPI serves Linux wheels under "
                       "manylinux_X_Y or musllinux_X_Y tags only")
    print(said)
    # The same rules on a local index, as for a proxy in front of PyPI: nothing goes up.
    error_line(run_publish(dist, index + "/", "--index-rules", "pypi", env=CREDS), "(rule: platform tags)")
    assert index_files(index) == []
    # An index of your own has no such rule: all three go up.
    proc = run_publish(dist, index + "/", env=CREDS)
    assert proc.returncode == 0, proc.stderr
    assert wheel.name in index_files(index) and len(index_files(index)) == 3


@pytest.mark.parametrize("licenses, named, needle", [
    ({}, (), "no license file in it (nothing in {info}/licenses/, no License-File in METADATA), so it is not "
             "published to PyPI (rule: license files)"),
    ({}, ("LICENSE",), "METADATA names License-File LICENSE, which is not in {info}/licenses/; PyPI refuses it "
                       "(rule: license files)"),
])
def test_a_wheel_without_its_license_is_refused_for_pypi(tmp_path, licenses, named, needle):
    dist, wheel = _dist_with(tmp_path, license_files=licenses, license_named=named)
    info = f"{VARIANTS[0].replace('-', '_')}-{SETTINGS.version}.dist-info"
    print(error_line(run_publish(dist, PYPI, "--dry-run"), f"{wheel}: " + needle.format(info=info),
                      "hint: a wheel carries its license files in .dist-info/licenses/"))


def test_a_wheel_over_pypis_size_limit_is_refused(tmp_path):
    dist, wheel = _dist_with(tmp_path, files={"onnxruntime_ep_amdgpu/blob.bin": os.urandom(101 * 1024 * 1024)})
    print(error_line(run_publish(dist, PYPI, "--dry-run"), f"{wheel}: 101.0 MiB, over PyPI's upload limit of 100 MiB "
                      "(rule: file size); nothing was uploaded", "--size-limit MIB"))
    # A project PyPI granted more says so; the rest of the checks then run.
    allowed = run_publish(dist, PYPI, "--dry-run", "--size-limit", "200")
    assert "rule: file size" not in allowed.stderr, allowed.stderr


def test_the_size_limit_of_an_index_of_your_own_stops_before_any_upload(tmp_path, index):
    dist, wheel = _dist_with(tmp_path, files={"onnxruntime_ep_amdgpu/blob.bin": os.urandom(2 * 1024 * 1024)})
    error_line(run_publish(dist, index + "/", "--size-limit", "1.5", env=CREDS),
                f"{wheel}: 2.0 MiB, over the --size-limit of 1.5 MiB (rule: file size); nothing was uploaded")
    assert index_files(index) == []


def test_every_refusal_is_counted_in_the_one_line(tmp_path):
    dist, wheel = _dist_with(tmp_path, tag="py3-none-linux_x86_64", license_files={})
    local = metadata_wheel(dist, VARIANTS[1], f"{SETTINGS.version}+glibc2.28")
    checksums.write(dist, [p.name for p in dist.iterdir() if p.name != checksums.FILENAME])
    assert sorted([wheel.name, local.name]) == [wheel.name, local.name]   # the file names' order is the report's
    said = error_line(run_publish(dist, PYPI, "--dry-run"), f"{wheel}: platform tag linux_x86_64, which PyPI refuses "
                       f"(rule: platform tags) (and 2 more: {wheel.name} (license files), {local.name} (public "
                       "versions)); nothing was uploaded")
    print(said)


def test_a_release_with_licenses_passes_pypis_rules_and_its_meta_package_carries_the_license(tmp_path, index):
    dist = release_dist(tmp_path / "dist", SETTINGS)
    meta = next(dist.glob(f"{META.replace('-', '_')}-*.whl"))
    with zipfile.ZipFile(meta) as archive:
        info = f"{META.replace('-', '_')}-{SETTINGS.version}.dist-info"
        assert archive.read(f"{info}/licenses/LICENSE").decode() == LICENSE_TEXT
        metadata = archive.read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT\n" in metadata and "License-File: LICENSE\n" in metadata
    proc = run_publish(dist, index + "/", "--index-rules", "pypi", env=CREDS)
    assert proc.returncode == 0, proc.stderr
    assert len(index_files(index)) == 3


@pytest.mark.parametrize("size", ["0", "big", "inf"])
def test_a_bad_size_limit_is_argparses_one_error(tmp_path, size):
    proc = run_publish(release_dist(tmp_path / "dist", SETTINGS), "http://127.0.0.1:9/", "--size-limit", size)
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert errors == [f"python -m toolkit publish: error: argument --size-limit: '{size}': expected a size in MiB "
                      "above 0 (e.g. 100)"]


def test_an_unknown_set_of_rules_is_one_error_line(tmp_path):
    dist = release_dist(tmp_path / "dist", SETTINGS)
    error_line(run_publish(dist, "http://127.0.0.1:9/", "--index-rules", "warehouse"),
                "--index-rules warehouse: no such set of index rules in index_rules.json", "hint: choose one of pypi")
