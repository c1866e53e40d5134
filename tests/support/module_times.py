"""A pytest plugin: the time each test module took (setup, call and teardown of its tests), slowest first, printed
at the end of the run, so a CI log shows where its wall time went and the next slow module is seen.

A session fixture's cost (a sample build, a build root) counts for the module whose test first asked for it:
that module is where the run waited.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

_seconds: dict[str, float] = defaultdict(float)
_tests: dict[str, set[str]] = defaultdict(set)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    module = report.nodeid.split("::", 1)[0]
    _seconds[module] += report.duration
    _tests[module].add(report.nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not _seconds:
        return
    total = sum(_seconds.values())
    terminalreporter.write_sep("=", f"time per test module ({len(_seconds)} modules, {total:.1f} s)")
    for module, seconds in sorted(_seconds.items(), key=lambda item: (-item[1], item[0])):
        share = 100 * seconds / total if total else 0.0
        terminalreporter.write_line(f"{seconds:8.1f} s {share:5.1f}% {len(_tests[module]):5d} tests  {module}")
