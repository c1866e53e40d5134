"""Hostile values on the toolkit's command line: run `python -m toolkit` in this process while an audit hook
records every process it starts, and make small real git repositories to attack it with.

An audit hook sees a process start however the code spells it (subprocess, os.system, os.exec*, os.spawn*,
os.posix_spawn), so "refused before any subprocess runs" is checked, not assumed.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty")
_recording: list[list[tuple[str, str]]] = []


def _hook(event: str, args: tuple) -> None:
    if _recording and event in _EVENTS:
        _recording[-1].append((event, repr(args)[:2000]))


sys.addaudithook(_hook)


@contextlib.contextmanager
def processes_started() -> Iterator[list[tuple[str, str]]]:
    """The processes started in this process while the block runs: (audit event, its arguments)."""
    started: list[tuple[str, str]] = []
    _recording.append(started)
    try:
        yield started
    finally:
        _recording.pop()


@dataclass
class Outcome:
    rc: int
    stderr: str
    started: list[tuple[str, str]]

    def assert_refused(self, *needles: str) -> str:
        """Exit 2 with one error line holding every needle, and no process started; returns that line."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        assert self.rc == 2, self.stderr
        assert not self.started, f"a process was started: {self.started}"
        assert len(lines) == 1 and lines[0].startswith("error: "), self.stderr
        for needle in needles:
            assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
        return lines[0]


def toolkit_here(cwd: Path, *argv: str) -> Outcome:
    """`python -m toolkit ARGV` run in this process from `cwd` (restored after, as is the environment)."""
    from toolkit.cli.main import main

    saved_env, saved_cwd, err = dict(os.environ), os.getcwd(), io.StringIO()
    os.chdir(cwd)
    try:
        with processes_started() as started, contextlib.redirect_stderr(err):
            try:
                rc = main(list(argv))
            except SystemExit as exc:  # argparse's own refusals
                rc = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Outcome(rc, err.getvalue(), started)


def git(*args: str, cwd: Path | None = None) -> str:
    """Real git, for making the test repositories (never the toolkit's runner)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    proc = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def repo_with(path: Path, files: dict[str, str], gitlinks: dict[str, str] | None = None) -> str:
    """A repository at `path` whose one commit holds `files` (and submodule entries `gitlinks`: path -> commit,
    written straight into the index, so their .gitmodules URL is never contacted); returns the commit."""
    git("init", "-q", str(path))
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git("add", "-A", cwd=path)
    for sub, commit in (gitlinks or {}).items():
        git("update-index", "--add", "--cacheinfo", f"160000,{commit},{sub}", cwd=path)
    git("commit", "-q", "-m", "c", cwd=path)
    return git("rev-parse", "HEAD", cwd=path)
