"""The per-module time table (tests/support/module_times.py) at the end of a pytest run: every module, slowest
first, with its test count; a real pytest run on two small modules."""

from __future__ import annotations

import subprocess
import sys

from tests.support.tools import ROOT


def test_time_table_lists_modules_slowest_first(tmp_path):
    (tmp_path / "test_slow.py").write_text("import time\n\ndef test_a():\n    time.sleep(0.4)\n\n"
                                           "def test_b():\n    pass\n")
    (tmp_path / "test_quick.py").write_text("def test_c():\n    pass\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.support.module_times", "-q",
                           "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "time per test module (2 modules," in line)
    slow, quick = lines[head + 1].split(), lines[head + 2].split()
    assert slow[-1] == "test_slow.py" and slow[-3:-1] == ["2", "tests"] and float(slow[0]) >= 0.4
    assert quick[-1] == "test_quick.py" and quick[-3:-1] == ["1", "tests"]
