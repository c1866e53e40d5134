"""A pytest plugin: the time each test module took (setup, call and teardown of its tests), slowest first, printed
at the end of the run, so a CI log shows where its wall time went and the next slow module is seen.

A session fixture's cost (a sample build, a build root) counts for the module whose test first asked for it:
that module is where the run waited.

The free disk is sampled after each test too (the filesystems of the temporary folder and the toolkit cache):
the lowest it fell to and the module it fell in are printed with the table, since a full disk fails a run as
surely as a slow one (two build roots, their builds and the release trees hold gigabytes each).
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections import defaultdict

import pytest

_seconds: dict[str, float] = defaultdict(float)
_tests: dict[str, set[str]] = defaultdict(set)
_lowest: dict[str, tuple[int, str]] = {}    # filesystem (a path on it) -> (lowest free bytes, module)


@functools.cache
def _filesystems() -> dict[int, str]:
    """One path per filesystem the run writes gigabytes to (asked once: tests change TOOLKIT_CACHE_DIR)."""
    from toolkit.buildroot.sandbox import cache_dir

    paths = [tempfile.gettempdir(), str(cache_dir())]
    found: dict[int, str] = {}
    for path in paths:
        while not os.path.exists(path):
            path = os.path.dirname(path)
        found.setdefault(os.stat(path).st_dev, path)
    return found


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    module = report.nodeid.split("::", 1)[0]
    _seconds[module] += report.duration
    _tests[module].add(report.nodeid)
    if report.when == "teardown":
        for path in _filesystems().values():
            stat = os.statvfs(path)
            free = stat.f_bavail * stat.f_frsize
            if path not in _lowest or free < _lowest[path][0]:
                _lowest[path] = (free, module)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not _seconds:
        return
    total = sum(_seconds.values())
    terminalreporter.write_sep("=", f"time per test module ({len(_seconds)} modules, {total:.1f} s)")
    for module, seconds in sorted(_seconds.items(), key=lambda item: (-item[1], item[0])):
        share = 100 * seconds / total if total else 0.0
        terminalreporter.write_line(f"{seconds:8.1f} s {share:5.1f}% {len(_tests[module]):5d} tests  {module}")
    for path, (free, module) in sorted(_lowest.items()):
        stat = os.statvfs(path)
        terminalreporter.write_line(f"disk of {path}: lowest free {free / 2**30:.1f} GiB (in {module}), "
                                    f"{stat.f_bavail * stat.f_frsize / 2**30:.1f} GiB free at the end")
