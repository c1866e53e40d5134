"""`release-compare`: two release folders, the file that differs and, for a wheel, its first differing member."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support.tools import ROOT
from toolkit.release.reproducible import compare_dirs, release_env


def _wheel(path: Path, members: list[tuple[str, bytes]], date=(2020, 1, 1, 0, 0, 0)) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members:
            archive.writestr(zipfile.ZipInfo(name, date), data)


def _release(folder: Path, lib: bytes, date=(2020, 1, 1, 0, 0, 0), sums: str = "x  a.whl\n") -> Path:
    folder.mkdir()
    _wheel(folder / "a.whl", [("pkg/__init__.py", b""), ("pkg/libx.so", lib), ("pkg-1.dist-info/RECORD", b"r")], date)
    (folder / "SHA256SUMS").write_text(sums)
    return folder


def test_identical_folders_compare_clean(tmp_path):
    assert compare_dirs(_release(tmp_path / "a", b"\x7fELF1"), _release(tmp_path / "b", b"\x7fELF1")) == []


def test_the_first_differing_member_and_offset_are_named(tmp_path):
    a = _release(tmp_path / "a", b"\x7fELF-build-id-1", sums="1  a.whl\n")
    b = _release(tmp_path / "b", b"\x7fELF-build-id-2", sums="2  a.whl\n")
    lines = compare_dirs(a, b)
    assert lines[0] == "SHA256SUMS: line 1 differs: '1  a.whl' vs '2  a.whl'"
    assert lines[1] == "a.whl: member pkg/libx.so differs: 15 vs 15 bytes, first difference at offset 14"


def test_zip_dates_and_missing_files_are_named(tmp_path):
    a = _release(tmp_path / "a", b"same")
    b = _release(tmp_path / "b", b"same", date=(2021, 1, 1, 0, 0, 0))
    (a / "provenance.json").write_text("{}")
    lines = compare_dirs(a, b)
    assert lines[0] == f"provenance.json: only in {a}"
    assert lines[1].startswith("a.whl: member pkg/__init__.py: zip date_time differs ((2020, 1, 1")


def test_command_exits_1_on_a_difference(tmp_path):
    a, b = _release(tmp_path / "a", b"1"), _release(tmp_path / "b", b"2")
    proc = subprocess.run([sys.executable, "-m", "toolkit", "release-compare", str(a), str(b)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "a.whl: member pkg/libx.so differs" in proc.stdout


def test_release_sets_source_date_epoch_unless_given(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    env = release_env(ROOT / "recipes" / "umbrella-ep-real.toml")
    assert int(env["SOURCE_DATE_EPOCH"]) >= 315532800
    assert release_env(tmp_path / "r.toml")["SOURCE_DATE_EPOCH"] == "315532800"   # no checkout there
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert "SOURCE_DATE_EPOCH" not in release_env(ROOT / "recipes" / "umbrella-ep-real.toml")
