"""The test suite's own disk use: with the project's pytest settings, a passing test's tmp_path is gone when it
ends and a failing test's stays to look at (a full run's Wine prefixes and build trees are gigabytes, and kept runs
once filled CI's disk)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.tools import ROOT

TESTS = '''
def test_passes(tmp_path):
    (tmp_path / "made").write_text("x")

def test_fails(tmp_path):
    (tmp_path / "made").write_text("x")
    assert False
'''


def test_a_passing_tests_tmp_path_is_removed_and_a_failing_ones_kept(tmp_path: Path) -> None:
    (tmp_path / "test_two.py").write_text(TESTS)
    basetemp = tmp_path / "base"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir",
                           str(tmp_path), "-p", "no:cacheprovider", "--basetemp", str(basetemp), "test_two.py"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1 and "1 failed, 1 passed" in proc.stdout, proc.stdout + proc.stderr
    assert not (basetemp / "test_passes0").exists()
    assert (basetemp / "test_fails0" / "made").is_file()
