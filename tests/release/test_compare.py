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


# -- hostile release folders: links, unreadable wheels, large members --------------------------------------------

CANARY = "CANARY-TOKEN-4f1d2c"


def _run_compare(a: Path, b: Path, **env) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "toolkit", "release-compare", str(a), str(b)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, **env})


def test_links_are_compared_as_links_never_followed(tmp_path):
    """A link to /proc/self/environ or to a file outside the folders: its target is named, its content never."""
    outside = tmp_path / "outside.txt"
    outside.write_text(f"secret {CANARY}\n")
    a, b = _release(tmp_path / "a", b"1"), _release(tmp_path / "b", b"1")
    (a / "SHA256SUMS").unlink()
    (b / "SHA256SUMS").unlink()
    (a / "SHA256SUMS").symlink_to("/proc/self/environ")
    (b / "SHA256SUMS").symlink_to(outside)
    (a / "notes.txt").symlink_to(outside)
    (b / "notes.txt").write_text("plain\n")
    (a / "same-link").symlink_to(outside)
    (b / "same-link").symlink_to(outside)
    before = outside.stat()
    proc = _run_compare(a, b, FAKE_CI_TOKEN=CANARY)
    assert proc.returncode == 1, proc.stderr
    assert CANARY not in proc.stdout + proc.stderr
    assert "SHA256SUMS: links to different targets: '/proc/self/environ'" in proc.stdout
    assert "notes.txt: a link in one, a file in the other" in proc.stdout
    assert "same-link" not in proc.stdout   # the same link in both: equal, unread
    assert outside.read_text() == f"secret {CANARY}\n" and outside.stat().st_mtime_ns == before.st_mtime_ns


def test_a_wheel_that_is_not_a_zip_is_one_error_line_exit_2(tmp_path):
    a, b = _release(tmp_path / "a", b"1"), _release(tmp_path / "b", b"1")
    (b / "a.whl").write_bytes(b"not a zip at all " * 10)
    proc = _run_compare(a, b)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "a.whl" in lines[0] and "not a readable wheel" in lines[0] and "Traceback" not in proc.stderr


def test_a_missing_folder_is_one_error_line_exit_2(tmp_path):
    a = _release(tmp_path / "a", b"1")
    proc = _run_compare(a, tmp_path / "nope")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no such release folder" in proc.stderr


def test_large_members_are_streamed_not_read_whole(tmp_path):
    """Two wheels with a 64 MiB member differing in its last byte: found, and the process stays far below
    the member's size in memory (it used to read both members whole)."""
    big = b"\0" * (64 << 20)
    for name, last in (("a", b"1"), ("b", b"2")):
        folder = tmp_path / name
        folder.mkdir()
        with zipfile.ZipFile(folder / "x.whl", "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("pkg/big.bin", big + last)
    del big
    # VmHWM: this process's own peak (ru_maxrss would also count the forked test process before exec).
    probe = ("import runpy, sys; sys.argv = ['toolkit', 'release-compare', sys.argv[1], sys.argv[2]]\n"
             "try:\n    runpy.run_module('toolkit', run_name='__main__')\n"
             "except SystemExit as e:\n    code = e.code\n"
             "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
             "print('maxrss', hwm, file=sys.stderr); sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "a"), str(tmp_path / "b")], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "x.whl: member pkg/big.bin differs: 67108865 vs 67108865 bytes, first difference at offset 67108864" \
        in proc.stdout
    maxrss_kib = int(proc.stderr.split("maxrss")[-1].split()[0])
    assert maxrss_kib < 100 * 1024, f"{maxrss_kib} KiB: the members were read whole"


def test_long_lines_are_quoted_as_a_bounded_excerpt(tmp_path):
    a, b = _release(tmp_path / "a", b"1"), _release(tmp_path / "b", b"1")
    (a / "SHA256SUMS").write_text("x" * 100_000 + "A\n")
    (b / "SHA256SUMS").write_text("x" * 100_000 + "B\n")
    line = compare_dirs(a, b)[0]
    assert line.startswith("SHA256SUMS: line 1 differs:") and len(line) < 400
