"""Safe extraction: good tar/zip archives unpack whole; malicious ones are refused and write nothing."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from toolkit.sources.extract import extract_archive
from toolkit.util.errors import ToolkitError


def _tar(path: Path, members: list[tuple], mode: str = "w:gz") -> Path:
    """members: (name, kind, payload-or-linkname)."""
    with tarfile.open(path, mode) as tf:
        for name, kind, arg in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(arg)
                info.mode = 0o755 if name.endswith(".sh") else 0o644
                tf.addfile(info, io.BytesIO(arg))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                         "chr": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            if kind in ("sym", "hard"):
                info.linkname = arg
            if kind == "chr":
                info.devmajor, info.devminor = 1, 3
            tf.addfile(info)
    return path


def _zip(path: Path, members: list[tuple]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, kind, arg in members:
            info = zipfile.ZipInfo(name)
            if kind == "sym":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, arg)
            elif kind == "chr":
                info.external_attr = (stat.S_IFCHR | 0o644) << 16
                zf.writestr(info, b"")
            else:
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                zf.writestr(info, arg)
    return path


@pytest.fixture
def area(tmp_path):
    """A sandbox: archives go in, dest is inside it, 'outside' must stay empty."""
    (tmp_path / "outside").mkdir()
    return tmp_path


def _snapshot(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


@pytest.mark.parametrize("mode,suffix", [("w:gz", "tar.gz"), ("w:xz", "tar.xz"), ("w:bz2", "tar.bz2"), ("w", "tar")])
def test_good_tar_unpacks_and_strips_single_top_folder(area, mode, suffix):
    archive = _tar(area / f"good.{suffix}", [
        ("pkg-1.0/", "dir", None),
        ("pkg-1.0/CMakeLists.txt", "file", b"project(pkg)\n"),
        ("pkg-1.0/tools/run.sh", "file", b"#!/bin/sh\n"),
        ("pkg-1.0/include/link.h", "sym", "../CMakeLists.txt"),
        ("pkg-1.0/copy.txt", "hard", "pkg-1.0/CMakeLists.txt"),
    ], mode)
    dest = extract_archive(archive, area / "dest")
    assert (dest / "CMakeLists.txt").read_bytes() == b"project(pkg)\n"
    assert os.access(dest / "tools/run.sh", os.X_OK)
    assert os.readlink(dest / "include/link.h") == "../CMakeLists.txt"
    assert (dest / "copy.txt").read_bytes() == b"project(pkg)\n"
    assert not (dest / "copy.txt").samefile(dest / "CMakeLists.txt")


def test_good_zip_unpacks_with_explicit_strip(area):
    archive = _zip(area / "good.zip", [("a/b/file.txt", "file", b"hi"), ("a/c.txt", "file", b"c")])
    dest = extract_archive(archive, area / "dest", strip_components=1)
    assert (dest / "b/file.txt").read_bytes() == b"hi" and (dest / "c.txt").read_bytes() == b"c"


def test_several_top_entries_are_not_stripped(area):
    archive = _tar(area / "flat.tar.gz", [("one.txt", "file", b"1"), ("two/x.txt", "file", b"2")])
    dest = extract_archive(archive, area / "dest")
    assert _snapshot(dest) == {"one.txt", "two", "two/x.txt"}


MALICIOUS_TAR = {
    "dotdot": ([("ok.txt", "file", b"ok"), ("../outside/evil.txt", "file", b"evil")], "contains '..'"),
    "absolute": ([("ok.txt", "file", b"ok"), (None, "file", b"evil")], "absolute path"),
    "symlink-out-then-write": ([("ok.txt", "file", b"ok"), ("link", "sym", "../outside"),
                                ("link/evil.txt", "file", b"evil")], "points outside the tree"),
    "symlink-absolute": ([("ok.txt", "file", b"ok"), ("link", "sym", None)], "absolute path"),
    "write-through-inner-link": ([("ok.txt", "file", b"ok"), ("d/", "dir", None), ("d/up", "sym", ".."),
                                  ("d/up/x", "file", b"x")], "written through the symlink"),
    "hardlink-out": ([("ok.txt", "file", b"ok"), ("passwd", "hard", "/etc/passwd")], "absolute path"),
    "hardlink-missing": ([("ok.txt", "file", b"ok"), ("h", "hard", "nothere")], "does not point to a file"),
    "device": ([("ok.txt", "file", b"ok"), ("null", "chr", None)], "device file"),
    "fifo": ([("ok.txt", "file", b"ok"), ("pipe", "fifo", None)], "device file, FIFO"),
}


@pytest.mark.parametrize("case", sorted(MALICIOUS_TAR))
def test_malicious_tar_is_refused_and_writes_nothing(area, case):
    members, reason = MALICIOUS_TAR[case]
    outside = area / "outside"
    # Absolute paths point into the sandbox, so a broken check would show up there.
    members = [(m[0] or str(outside / "abs.txt"), m[1], m[2] or str(outside)) for m in members]
    archive = _tar(area / f"{case}.tar.gz", members)
    before = _snapshot(area)
    with pytest.raises(ToolkitError) as err:
        extract_archive(archive, area / "dest")
    assert reason in str(err.value) and str(archive) in str(err.value)
    assert _snapshot(area) == before  # no dest, no temporary folder, nothing outside


MALICIOUS_ZIP = {
    "dotdot": ([("ok.txt", "file", b"ok"), ("../outside/evil.txt", "file", b"evil")], "contains '..'"),
    "absolute": ([("ok.txt", "file", b"ok"), ("/tmp/abs-evil.txt", "file", b"evil")], "absolute path"),
    "symlink-out-then-write": ([("link", "sym", "../outside"), ("link/evil.txt", "file", b"evil")],
                               "points outside the tree"),
    "device": ([("ok.txt", "file", b"ok"), ("null", "chr", None)], "device file"),
}


@pytest.mark.parametrize("case", sorted(MALICIOUS_ZIP))
def test_malicious_zip_is_refused_and_writes_nothing(area, case):
    members, reason = MALICIOUS_ZIP[case]
    archive = _zip(area / f"{case}.zip", members)
    before = _snapshot(area)
    with pytest.raises(ToolkitError) as err:
        extract_archive(archive, area / "dest")
    assert reason in str(err.value)
    assert _snapshot(area) == before
    assert not Path("/tmp/abs-evil.txt").exists()


def test_link_chain_escaping_through_dot_link_is_refused(area):
    # 'here' -> '.' is harmless alone; 'esc' -> 'here/..' looks inside lexically but leaves the tree.
    archive = _tar(area / "chain.tar", [("a.txt", "file", b"a"), ("here", "sym", "."), ("esc", "sym", "here/..")],
                   "w")
    with pytest.raises(ToolkitError) as err:
        extract_archive(archive, area / "dest", strip_components=0)
    assert "outside the tree" in str(err.value)


def test_failed_extraction_keeps_previous_destination(area):
    dest = area / "dest"
    extract_archive(_tar(area / "v1.tar.gz", [("v1.txt", "file", b"1")]), dest)
    bad = _tar(area / "bad.tar.gz", [("v2.txt", "file", b"2"), ("../x", "file", b"x")])
    with pytest.raises(ToolkitError):
        extract_archive(bad, dest)
    assert _snapshot(dest) == {"v1.txt"}


def test_not_an_archive_is_a_clear_error(area):
    junk = area / "junk.tar.gz"
    junk.write_bytes(b"this is not an archive")
    with pytest.raises(ToolkitError) as err:
        extract_archive(junk, area / "dest")
    assert str(junk) in str(err.value) and "not a tar or zip archive" in str(err.value)
    assert not (area / "dest").exists()
