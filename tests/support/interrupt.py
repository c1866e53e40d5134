"""Ctrl-C during a build, as a person or a CI runner sends it: the whole process group, or only the build tools."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tests.support.tools import ROOT


def interrupt_build(argv: Sequence[str], env: Mapping[str, str], whom: str, tools: Callable[[int], list[int]],
                    start_within: float, settle: float, wait: float, running: str | None = None) -> tuple[int, str]:
    """Run `argv` in a session of its own until its build step starts (and, with `running`, until a process of that
    name is among `tools(session)`), let the tools run `settle` seconds, then SIGINT the group (`whom` = "group") or
    each of `tools(session)`; (exit code, everything it printed)."""
    proc = subprocess.Popen(list(argv), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env=dict(env))
    assert proc.stdout is not None
    seen = ""
    deadline = time.monotonic() + start_within
    while "build: $" not in seen and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen += line
    assert "build: $" in seen, seen
    while running is not None and running not in _names(tools(proc.pid)):
        assert time.monotonic() < deadline and proc.poll() is None, f"no {running} process started\n{seen}"
        time.sleep(0.1)
    time.sleep(settle)
    if whom == "group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        for pid in tools(proc.pid):
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
    rest = proc.stdout.read()
    return proc.wait(timeout=wait), seen + rest


def _names(pids: list[int]) -> set[str]:
    names = set()
    for pid in pids:
        try:
            names.add(Path(f"/proc/{pid}/comm").read_text().strip())
        except OSError:
            pass
    return names
