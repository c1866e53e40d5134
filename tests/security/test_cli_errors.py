"""Every CLI failure is one `error:` line with exit 2, and echoed values are shortened: `meta-wheel --out` at a
file, below a file, in /proc/sys, in a folder nobody may write, SOURCE_DATE_EPOCH past what a zip holds;
`bump --to` with a 100 kB revision. Nothing is written where it must not be."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT, one_error_line

RECIPE = str(ROOT / "recipes" / "umbrella-ep-real.toml")   # has [wheel.rocm_variants]: a meta-package


def _toolkit(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_meta_wheel_out_at_or_below_a_file(tmp_path):
    file = tmp_path / "a-file"
    file.write_text("keep me")
    one_error_line(_toolkit("meta-wheel", "--recipe", RECIPE, "--out", str(file)), "is a file, not a folder")
    one_error_line(_toolkit("meta-wheel", "--recipe", RECIPE, "--out", str(file / "sub")),
                    f"--out {file / 'sub'}: cannot write", "Not a directory")
    assert file.read_text() == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_meta_wheel_out_in_proc_sys():
    one_error_line(_toolkit("meta-wheel", "--recipe", RECIPE, "--out", "/proc/sys/toolkit-test"),
                    "--out /proc/sys/toolkit-test: cannot write")


def test_meta_wheel_out_in_a_folder_nobody_may_write(tmp_path):
    """Immutable (root ignores modes, not the immutable flag) or read-only for a user."""
    folder = tmp_path / "locked"
    folder.mkdir()
    if os.getuid() == 0:
        assert shutil.which("chattr"), "chattr (e2fsprogs) makes the folder immutable for root"
        assert subprocess.run(["chattr", "+i", str(folder)]).returncode == 0, "the file system takes no +i"
    else:
        folder.chmod(0o555)
    try:
        one_error_line(_toolkit("meta-wheel", "--recipe", RECIPE, "--out", str(folder)), "cannot write")
        assert not list(folder.iterdir())
    finally:
        if os.getuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)])
        folder.chmod(0o755)


@pytest.mark.parametrize("epoch", ["99999999999999", "4354819200", "-1", "1e9"])
def test_meta_wheel_with_a_source_date_epoch_a_zip_cannot_hold(tmp_path, epoch):
    line = one_error_line(_toolkit("meta-wheel", "--recipe", RECIPE, "--out", str(tmp_path / "o"),
                                    SOURCE_DATE_EPOCH=epoch), "SOURCE_DATE_EPOCH")
    assert "at most 4354819199" in line and not (tmp_path / "o").exists()


def test_meta_wheel_at_the_last_date_a_zip_holds_still_works(tmp_path):
    proc = _toolkit("meta-wheel", "--recipe", RECIPE, "--out", str(tmp_path / "o"), SOURCE_DATE_EPOCH="4354819199")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).is_file()


def test_bump_echoes_a_long_revision_shortened(tmp_path):
    rev = "a" * 100_000
    proc = _toolkit("bump", "--recipe", "umbrella-ep-real", "--to", rev, "--offline",
                    TOOLKIT_CACHE_DIR=str(tmp_path / "cache"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr) < 1000 and "(100000 characters)" in proc.stderr
    bad = "-" + "b" * 100_000
    proc = _toolkit("bump", "--recipe", "umbrella-ep-real", f"--to={bad}", "--offline",
                    TOOLKIT_CACHE_DIR=str(tmp_path / "cache"))
    assert proc.returncode == 2 and len(proc.stderr) < 1000 and "(100001 characters)" in proc.stderr
