"""Running a tool: `run` for every command the toolkit starts and checks, `run_tool` for the build tools
(CMake, Ninja), whose output goes to the terminal or, with -q, to a log file, `run_git` for git.

This module is the only one that starts processes (tests/util/test_call_sites.py walks the package to keep it
so). Values from recipes, lock files and users reach a tool only after toolkit.util.argcheck accepted them,
and where the tool cannot read them as options: `run_git` puts them after `--end-of-options`.

A failure is a ToolkitError naming what was being done, the command, its exit code and the tool's last
lines of output (its stderr, or the log file). A tool that died of SIGINT is an interruption
(KeyboardInterrupt), not a failure.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolkit.util import argcheck, log
from toolkit.util.errors import ToolkitError

TAIL_LINES = 30
OUTPUTS = ("capture", "merge", "terminal")


def interrupted(returncode: int) -> bool:
    """The tool stopped because of Ctrl-C: killed by SIGINT, or exited with the shells' 128+SIGINT."""
    return returncode in (-signal.SIGINT, 128 + signal.SIGINT)


def run(cmd: Sequence[str | os.PathLike[str]], what: str | None = None, *, output: str = "capture",
        log_file: Path | None = None, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
        input: str | None = None, timeout: float | None = None, umask: int | None = None, check: bool = True,
        hint: str | None = None, shown: Sequence[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `cmd` and return its CompletedProcess (text: UTF-8, undecodable bytes kept as surrogates).

    what: the work in words ("wheel build", "hipify-perl on a.cu"), said first in an error.
    output: "capture" (stdout and stderr kept apart, returned), "merge" (both in `stdout`, in the order
    written) or "terminal" (not captured: the user sees it). log_file: the output goes to this file
    instead (the command line first), and an error quotes its last lines.
    env: the tool's whole environment (None: this process's). umask: the tool's file-creation mask.
    check: a non-zero exit raises a ToolkitError naming `what`, the command (`shown`, when the command
    run wraps another: bwrap), the exit code and the tool's last lines; `hint` says what to do.
    Whatever `check` says, a tool that cannot start or runs past `timeout` seconds raises a ToolkitError,
    and a tool killed by Ctrl-C raises KeyboardInterrupt.
    """
    if output not in OUTPUTS:
        raise ValueError(f"output={output!r}: expected one of {OUTPUTS}")
    argv = [os.fspath(part) for part in cmd]
    named = f"`{shlex.join(shown if shown is not None else argv)}`"
    lead = f"{what}: " if what else ""
    kwargs: dict[str, Any] = {"cwd": cwd, "env": None if env is None else dict(env), "input": input, "timeout": timeout,
              "text": True, "encoding": "utf-8", "errors": "surrogateescape"}
    if umask is not None:
        kwargs["preexec_fn"] = lambda: os.umask(umask)
    try:
        if log_file is not None:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            with open(log_file, "w", encoding="utf-8") as out:
                out.write("$ " + shlex.join(argv) + "\n")
                out.flush()
                proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, **kwargs)
        elif output == "capture":
            proc = subprocess.run(argv, capture_output=True, **kwargs)
        elif output == "merge":
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)
        else:
            proc = subprocess.run(argv, **kwargs)
    except OSError as exc:
        raise ToolkitError(f"{lead}cannot start {named}: {exc.strerror or exc}",
                           hint=hint or f"is {argv[0]} installed (and on PATH)?") from None
    except subprocess.TimeoutExpired as exc:
        # What it printed before it was killed often says where it hung.
        printed = subprocess.CompletedProcess(argv, -9, _text(exc.stdout), _text(exc.stderr))
        raise ToolkitError(f"{lead}{named} did not finish within its time limit of {timeout:g} s and was killed"
                           + _tail(printed, output, log_file), hint=hint) from None
    if interrupted(proc.returncode):
        raise KeyboardInterrupt
    if check and proc.returncode != 0:
        raise ToolkitError(f"{what or named} failed (exit {proc.returncode})"
                           + (f": {named}" if what else "") + _tail(proc, output, log_file),
                           hint=hint or ("the tool's output above says why" if output == "terminal" and
                                         log_file is None else None))
    return proc


def _text(data: str | bytes | None) -> str:
    return data.decode("utf-8", errors="surrogateescape") if isinstance(data, bytes) else (data or "")


def _tail(proc: subprocess.CompletedProcess[str], output: str, log_file: Path | None) -> str:
    """The tool's last lines, indented under the error's first line ('' when it printed none)."""
    if log_file is not None:
        lines = log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-TAIL_LINES:]
        return (f"\n  its output is in {log_file}; the last lines:\n"
                + "\n".join(f"    {line}" for line in lines))
    if output == "terminal":
        return ""
    texts = [proc.stderr, proc.stdout] if output == "capture" else [proc.stdout]
    for text in texts:
        lines = [line for line in (text or "").splitlines() if line.strip()][-TAIL_LINES:]
        if lines:
            return "\n" + "\n".join(f"  {line.rstrip()}" for line in lines)
    return ""


def run_tool(cmd: list[str], what: str, env: dict[str, str] | None = None, log_dir: Path | None = None) -> None:
    """A build tool's step (`what`: configure, build, install): its output on the terminal, or with -q in
    `log_dir`/<what>.log, which a failure names."""
    if not log.is_verbose():  # with -v every command is printed as it starts
        log.stage(what, "$ " + " ".join(cmd))
    full_env = {**os.environ, **env} if env else None
    if log.is_quiet() and log_dir is not None:
        log_file = log_dir / f"{what}.log"
        run(cmd, what, log_file=log_file, env=full_env,
            hint=f"read {log_file}, or rerun without -q to see the output as it happens")
    else:
        run(cmd, what, output="terminal", env=full_env, hint="the tool's own output above says why")


def run_pipe(producer: Sequence[str | os.PathLike[str]], consumer: Sequence[str | os.PathLike[str]], what: str, *,
             env: Mapping[str, str] | None = None, hint: str | None = None) -> None:
    """`producer | consumer` (bytes, never buffered here: a tar of gigabytes streams through); either exiting
    non-zero raises a ToolkitError naming `what`, both exit codes and their last error lines."""
    first = [os.fspath(part) for part in producer]
    second = [os.fspath(part) for part in consumer]
    try:
        upstream = subprocess.Popen(first, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise ToolkitError(f"{what}: cannot start {first[0]}: {exc.strerror or exc}") from None
    try:
        downstream = subprocess.run(second, stdin=upstream.stdout, capture_output=True,
                                    env=None if env is None else dict(env))
    except OSError as exc:
        upstream.kill()
        raise ToolkitError(f"{what}: cannot start {second[0]}: {exc.strerror or exc}") from None
    finally:
        assert upstream.stdout is not None
        upstream.stdout.close()
        errors = upstream.stderr.read() if upstream.stderr else b""
        upstream.wait()
    if upstream.returncode != 0 or downstream.returncode != 0:
        said = (errors + downstream.stderr).decode(errors="replace").strip()[-2000:]
        raise ToolkitError(f"{what} failed: {Path(first[0]).name} exit {upstream.returncode}, "
                           f"{Path(second[0]).name} exit {downstream.returncode}", hint=hint or said or None)


def tool_version(path: str | os.PathLike[str]) -> str:
    """The first line `TOOL --version` prints (stdout, else stderr), or why there is none.

    Run with a wide COLUMNS: a tool whose version is an argparse `version` action (auditwheel's names the folder
    it is installed in) wraps it at the terminal's width, and the first line would end mid-path."""
    try:
        out = run([path, "--version"], timeout=30, check=False, env={**os.environ, "COLUMNS": "1000"})
    except ToolkitError as exc:
        return f"not runnable ({exc.message})"
    lines = (out.stdout or out.stderr).splitlines()
    return lines[0].strip() if lines else "unknown version"


def run_git(args: list[str], operands: Sequence[str], what: str, *, cwd: Path | str | None = None,
            file_protocol: bool = False, check: bool = True, hint: str | None = None,
            timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """`git ARGS --end-of-options OPERANDS`: ARGS are the toolkit's own (a subcommand and its options),
    OPERANDS the values that came from elsewhere (URLs, remotes, commits, revisions).

    Git runs only the accepted schemes' protocols (argcheck.GIT_SCHEMES; file:// only with `file_protocol`),
    in submodules too, never prompts, and an operand starting with '-' is refused before git starts.
    """
    for operand in operands:
        if not operand or operand.startswith("-"):
            raise ToolkitError(f"{what}: git operand {operand!r} is empty or starts with '-'",
                               hint="a URL, commit or revision never starts with '-'")
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true")
    env.pop("GIT_ALLOW_PROTOCOL", None)  # it would override the protocol.* settings below
    separator = ["--end-of-options"] if operands else []
    argv = ["git", *argcheck.git_protocol_config(file_protocol), *args, *separator, *operands]
    return run(argv, what, cwd=cwd, env=env, check=check, hint=hint, timeout=timeout)
