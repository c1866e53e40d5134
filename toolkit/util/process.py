"""Running a build tool (CMake, Ninja): its output on the terminal, or with -q in a log file.

A quiet run keeps the tool's whole output in the work tree's logs/ folder and names that file (with the
last lines) when the tool fails. A tool that died of SIGINT is an interruption, not a failure.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from toolkit.util import log
from toolkit.util.errors import ToolkitError

TAIL_LINES = 30


def interrupted(returncode: int) -> bool:
    """The tool stopped because of Ctrl-C: killed by SIGINT, or exited with the shells' 128+SIGINT."""
    return returncode in (-signal.SIGINT, 128 + signal.SIGINT)


def run_tool(cmd: list[str], what: str, env: dict[str, str] | None = None, log_dir: Path | None = None) -> None:
    if not log.is_verbose():  # with -v every command is printed as it starts
        log.stage(what, "$ " + " ".join(cmd))
    full_env = {**os.environ, **env} if env else None
    if not (log.is_quiet() and log_dir is not None):
        proc = subprocess.run(cmd, check=False, env=full_env)
        _check(proc.returncode, cmd, what, None)
        return
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / f"{what}.log"
    with open(log_file, "w", encoding="utf-8") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        proc = subprocess.run(cmd, check=False, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    _check(proc.returncode, cmd, what, log_file)


def _check(returncode: int, cmd: list[str], what: str, log_file: Path | None) -> None:
    if returncode == 0:
        return
    if interrupted(returncode):
        raise KeyboardInterrupt
    if log_file is None:
        raise ToolkitError(f"{what} failed (exit {returncode}): {' '.join(cmd)}",
                           hint="the tool's own output above says why")
    lines = log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-TAIL_LINES:]
    raise ToolkitError(f"{what} failed (exit {returncode}): {' '.join(cmd)}\n"
                       f"  its output is in {log_file}; the last lines:\n"
                       + "\n".join(f"    {line}" for line in lines),
                       hint=f"read {log_file}, or rerun without -q to see the output as it happens")
