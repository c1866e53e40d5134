"""Licenses in the wheels (PEP 639): the EP tree's own files and License-Expression in the wheel the stage builds,
the recipe's authors, URLs and classifiers in its METADATA, and each bundled library's license (repair's step, run
on small wheels with real gcc-built libraries and a made-up system root; no build root): a wheel whose bundled
library has no license fails the check, and a library with no text or no table entry fails the repair, by name."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.wheel_support import SETTINGS, build_c_library, stand_in_lib_dir
from toolkit.recipe.wheel import Author
from toolkit.util.errors import ToolkitError
from toolkit.wheel.build import build_wheel
from toolkit.wheel.licenses import (
    Bundled,
    LicenseSource,
    add_bundled_licenses,
    license_problems,
    original_name,
    tree_license_files,
)
from toolkit.wheel.runpath import rewrite_wheel
from toolkit.wheel.wheelfile import read_headers

SAMPLE_TREE = Path(__file__).resolve().parents[2] / "samples" / "umbrella-ep"
LICENSED = replace(SETTINGS, license="MIT", authors=(Author("the ort-amdgpu-toolkit authors"),),
                   urls=(("Source", "https://example.org/ep"),), classifiers=("Programming Language :: Python :: 3",))
DIST_INFO = "onnxruntime_ep_amdgpu-0.1.0.dist-info"
LIBS = "onnxruntime_ep_amdgpu.libs"


def metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        return read_headers(archive, "METADATA")


def test_the_tree_license_files_are_license_copying_and_the_licenses_folder(tmp_path):
    for name in ("LICENSE", "COPYING.md", "License.txt", "LICENSES/MIT.txt", "LICENSES/settings.json", "README.md",
                 "src/LICENSE", "NOTICE"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    assert tree_license_files(tmp_path) == ("COPYING.md", "LICENSE", "LICENSES/MIT.txt", "License.txt", "NOTICE")


@pytest.fixture(scope="module")
def licensed_wheel(tmp_path_factory):
    work = tmp_path_factory.mktemp("licensed")
    return build_wheel(LICENSED, stand_in_lib_dir(work / "lib"), {"source_revision": "x"}, work / "out",
                       source_dir=SAMPLE_TREE)


def test_the_wheel_carries_the_tree_license_and_the_recipe_metadata(licensed_wheel):
    with zipfile.ZipFile(licensed_wheel) as archive:
        assert archive.read(f"{DIST_INFO}/licenses/LICENSE") == (SAMPLE_TREE / "LICENSE").read_bytes()
    headers = metadata(licensed_wheel)
    assert headers["Metadata-Version"] == "2.4"
    assert headers["License-Expression"] == "MIT"
    assert headers.get_all("License-File") == ["LICENSE"]
    assert headers["Author"] == "the ort-amdgpu-toolkit authors"
    assert headers.get_all("Project-URL") == ["Source, https://example.org/ep"]
    # The recipe's classifiers, and the operating system of the wheel's platform, which the toolkit adds.
    assert headers.get_all("Classifier") == ["Operating System :: POSIX :: Linux",
                                             "Programming Language :: Python :: 3"]
    assert license_problems(licensed_wheel) == []


def with_bundled(wheel: Path, work: Path, soname: str) -> tuple[Path, Path, str]:
    """`wheel` with a real library bundled as repair names it (<stem>-<8 hex>.so.N), and nothing else changed: the
    new wheel, its unpacked tree and the copy's archive path."""
    stem, _, rest = soname.partition(".so")
    member = f"{LIBS}/{stem}-0123abcd.so{rest}"
    unpacked = work / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    build_c_library(unpacked / member)
    rewrite_wheel(wheel, work / wheel.name, unpacked, [], [member])
    return work / wheel.name, unpacked, member


def system_root(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "root"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_bundled_library_without_its_license_fails_the_check_and_with_it_passes(licensed_wheel, tmp_path):
    bundled, unpacked, member = with_bundled(licensed_wheel, tmp_path / "b", "libzstd.so.1")
    assert license_problems(bundled) == [
        f"{member}: bundled library libzstd.so.1 has no license in {DIST_INFO}/licenses/bundled/libzstd.so.1/"]
    root = system_root(tmp_path, {"usr/share/doc/libzstd1/copyright": "Upstream-Name: Zstd\nLicense: BSD-3-clause"})
    done = add_bundled_licenses(bundled, unpacked, [Bundled(member, None)], tmp_path / "done",
                                LicenseSource(root=root))
    assert license_problems(done) == []
    with zipfile.ZipFile(done) as archive:
        folder = f"{DIST_INFO}/licenses/bundled/libzstd.so.1"
        assert archive.read(f"{folder}/copyright").decode().startswith("Upstream-Name: Zstd")
        notice = archive.read(f"{folder}/NOTICE").decode()
        names = archive.namelist()
    assert notice.startswith(f"Zstandard (libzstd.so.1) is bundled in this wheel as {member}.")
    assert "https://github.com/facebook/zstd" in notice
    # The license files stay in the dist-info, before RECORD, which stays last.
    assert names[-1] == f"{DIST_INFO}/RECORD" and names.index(f"{folder}/NOTICE") > names.index(f"{DIST_INFO}/WHEEL")
    headers = metadata(done)
    assert headers["License-Expression"] == "MIT AND (BSD-3-Clause OR GPL-2.0-only)"
    assert headers.get_all("License-File") == ["LICENSE", "bundled/libzstd.so.1/copyright",
                                               "bundled/libzstd.so.1/NOTICE"]


def test_an_lgpl_library_gets_the_license_text_and_a_notice_of_how_to_replace_it(licensed_wheel, tmp_path):
    bundled, unpacked, member = with_bundled(licensed_wheel, tmp_path / "b", "libdwarf.so.2")
    copyright_only = {"usr/share/doc/libdwarf2/copyright": "License: LGPL-2.1\n see /usr/share/common-licenses"}
    with pytest.raises(ToolkitError) as missing:
        add_bundled_licenses(bundled, unpacked, [Bundled(member, None)], tmp_path / "x",
                             LicenseSource(root=system_root(tmp_path / "a", copyright_only)))
    assert "libdwarf.so.2: its copyright file refers to" in missing.value.message
    assert "usr/share/common-licenses/LGPL-2.1" in missing.value.message
    root = system_root(tmp_path, {**copyright_only, "usr/share/common-licenses/LGPL-2.1": "GNU LESSER GENERAL"})
    done = add_bundled_licenses(bundled, unpacked, [Bundled(member, None)], tmp_path / "done",
                                LicenseSource(root=root))
    folder = f"{DIST_INFO}/licenses/bundled/libdwarf.so.2"
    with zipfile.ZipFile(done) as archive:
        assert archive.read(f"{folder}/LGPL-2.1") == b"GNU LESSER GENERAL"
        notice = archive.read(f"{folder}/NOTICE").decode()
    assert "GNU Lesser General Public License" in notice
    assert f"put it at {member}, under that file name" in notice
    assert "https://github.com/davea42/libdwarf-code" in notice
    assert metadata(done)["License-Expression"] == "MIT AND LGPL-2.1-only"
    assert license_problems(done) == []


def test_a_bundled_library_with_no_text_or_no_entry_fails_in_one_line_naming_it(licensed_wheel, tmp_path):
    bundled, unpacked, member = with_bundled(licensed_wheel, tmp_path / "b", "libprotobuf.so.32")
    with pytest.raises(ToolkitError) as no_text:
        add_bundled_licenses(bundled, unpacked, [Bundled(member, None)], tmp_path / "x",
                             LicenseSource(root=system_root(tmp_path, {})))
    assert no_text.value.message.startswith("libprotobuf.so.32: repair bundles it, but this machine has no license "
                                            "text for it")
    assert "\n" not in no_text.value.message
    other, unpacked2, member2 = with_bundled(licensed_wheel, tmp_path / "c", "libmadeup.so.1")
    with pytest.raises(ToolkitError) as no_entry:
        add_bundled_licenses(other, unpacked2, [Bundled(member2, None)], tmp_path / "y",
                             LicenseSource(root=system_root(tmp_path, {})))
    assert no_entry.value.message == (f"{member2}: repair bundles libmadeup.so.1, but "
                                      "toolkit/wheel/data/licenses.json names no license for it")


def test_a_license_file_metadata_does_not_declare_is_a_problem(licensed_wheel, tmp_path):
    unpacked = tmp_path / "u"
    with zipfile.ZipFile(licensed_wheel) as archive:
        archive.extractall(unpacked)
    extra = f"{DIST_INFO}/licenses/EXTRA"
    (unpacked / extra).write_text("x")
    rewrite_wheel(licensed_wheel, tmp_path / licensed_wheel.name, unpacked, [], [extra])
    assert license_problems(tmp_path / licensed_wheel.name) == [f"{extra}: METADATA has no License-File line for it"]


def test_grafted_names_map_back_to_the_library():
    assert original_name("libprotobuf-lite-1a2b3c4d.so.32") == "libprotobuf-lite.so.32"
    assert original_name("libamdgpu-ep.so") == "libamdgpu-ep.so"
