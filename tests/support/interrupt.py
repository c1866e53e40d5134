"""Ctrl-C during a build, as a person or a CI runner sends it: the whole process group, or only the build tools."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence

from tests.support.tools import ROOT


def interrupt_build(argv: Sequence[str], env: Mapping[str, str], whom: str, tools: Callable[[int], list[int]],
                    start_within: float, settle: float, wait: float) -> tuple[int, str]:
    """Run `argv` in a session of its own until its build step starts, let the tools run `settle` seconds, then
    SIGINT the group (`whom` = "group") or each of `tools(session)`; (exit code, everything it printed)."""
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
