"""The commands the documentation tells a reader to type run as written after README's set-up (`pipx install
nox`; the first session makes `.nox/toolkit`), not only parse (test_readme_commands.py parses them).

README's set-up gives nox and the environment `.nox/toolkit`; the system's Python lacks the toolkit's dependencies
(a bare `python -m toolkit inspect` fails with ModuleNotFoundError). So every toolkit command in a ```sh block or a
recipe's comment runs through a nox session, `.nox/toolkit/bin/python -m toolkit`, or an environment the line
itself states (`PYTHONPATH=... python3 -m toolkit` on the GPU machine). The cheap ones (listings, `--help`, dry
runs, checks) are run from the checkout and must exit 0 without a traceback: a `.nox/toolkit/bin/python` line
exactly as shown, a `nox -s` line as the command its session runs, in the environment every session uses (see
as_run); the heavy ones (builds, roots, releases) are parsed by test_readme_commands.py and have their environment
checked here.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.doc_commands import (
    ALL_SHOWN,
    PYTHON,
    SEPARATORS,
    Run,
    Shown,
    expand_synopsis,
    fill_placeholders,
    nox_sessions,
    runs_of,
    shell_words,
)
from tests.support.tools import ROOT, require_tool

ENVIRONMENT = ".nox/toolkit/bin/python"


def commands_with_assignments(text: str) -> list[tuple[list[str], list[str]]]:
    """Each simple command of a shell line as (its leading VAR=value assignments, its words)."""
    out, current = [], []
    for word in [*shell_words(text), ";"]:
        if word in SEPARATORS:
            assignments = []
            while current and re.match(r"^[A-Za-z_]\w*=", current[0]):
                assignments.append(current.pop(0))
            if current:
                out.append((assignments, current))
            current = []
        else:
            current.append(word)
    return out


def environment_problems(shown: Shown) -> list[str]:
    """Why a typed toolkit command would not run after README's set-up ([] when it would)."""
    problems = []
    for assignments, argv in commands_with_assignments(shown.text):
        if not (PYTHON.match(argv[0]) and argv[1:3] == ["-m", "toolkit"]):
            continue
        if argv[0] == ENVIRONMENT or any(a.startswith("PYTHONPATH=") for a in assignments):
            continue
        problems.append(f"{shown.where}: `{argv[0]} -m toolkit ...` runs a Python README's set-up does not "
                        f"provide: write `nox -s SESSION -- ...` or `{ENVIRONMENT} -m toolkit ...`")
    return problems


TYPED = [s for s in ALL_SHOWN if s.typed]


def test_every_typed_toolkit_command_names_an_environment_the_setup_provides():
    problems = [p for s in TYPED for p in environment_problems(s)]
    assert problems == []
    # The check itself: the guides' old spelling is caught, the stated environments pass.
    assert environment_problems(Shown("docs/x.md:1", "python -m toolkit inspect a.whl", typed=True))
    assert not environment_problems(Shown("docs/x.md:2", f"{ENVIRONMENT} -m toolkit inspect a.whl", typed=True))
    assert not environment_problems(Shown("docs/x.md:3", "PYTHONPATH=/s python3 -m toolkit list", typed=True))


def _cheap(argv: tuple[str, ...]) -> bool:
    """A toolkit command that only reads: a listing, help, a dry run or a check outside any root."""
    if "--root" in argv or not argv:
        return False
    return (argv[0] == "list" or "--help" in argv or argv[:3] == ("docs", "reference", "--check")
            or (argv[0] == "build" and "--dry-run" in argv) or (argv[0] == "patch" and "--check" in argv))


def _as_written(text: str) -> bool:
    """Whether the line runs as it stands: no synopsis brackets, placeholders, variables or globs."""
    if expand_synopsis(text) != [text] or re.search(r"[$<>*]|\.\.\.", text):
        return False
    return all(fill_placeholders(argv) == argv for _, argv in commands_with_assignments(text))


def _what_runs(argv: list[str], where: str) -> Run | None:
    """The toolkit command a simple command runs; a session named without `--` runs its command as it is."""
    if Path(argv[0]).name == "nox" and "--" not in argv:
        session = argv[argv.index("-s") + 1] if "-s" in argv[:-1] else None
        kind, prefix = nox_sessions().get(session, ("", ()))
        return Run(kind, prefix, where)
    runs = runs_of(argv, where)
    return runs[0] if len(runs) == 1 else None


def cheap_commands() -> list[str]:
    cheap = []
    for shown in TYPED:
        if not _as_written(shown.text) or shown.text in cheap:
            continue
        runs = [_what_runs(argv, shown.where) for _, argv in commands_with_assignments(shown.text)]
        if runs and all(r is not None and r.kind == "toolkit" and _cheap(r.argv) for r in runs):
            cheap.append(shown.text)
    return cheap


CHEAP = cheap_commands()


def test_the_cheap_commands_include_the_quickstarts_and_the_environments():
    assert {"nox -s list", "nox -s build -- --dry-run"} <= set(CHEAP)
    assert any(c.startswith(f"{ENVIRONMENT} -m toolkit ") for c in CHEAP)


def as_run(command: str) -> list[str]:
    """What runs `command` here: a `.nox/toolkit/bin/python` line as written; `nox -s SESSION -- ARGS` as the
    command that session runs, in the environment every session uses (nox itself is not started from inside the
    tests: a nox of another Python would make that environment again, under the running tests; that nox runs
    the sessions is tests/project/test_nox.py's, in an envdir of its own)."""
    (_, argv), = commands_with_assignments(command)
    if Path(argv[0]).name != "nox":
        return ["bash", "-c", command]
    run = _what_runs(argv, command)
    assert run is not None and run.kind == "toolkit", command
    return [str(ROOT / ENVIRONMENT), "-m", "toolkit", *run.argv]


def test_a_session_runs_its_command_in_the_shared_environment():
    assert as_run("nox -s list") == [str(ROOT / ENVIRONMENT), "-m", "toolkit", "list"]
    assert as_run("nox -s build -- --dry-run") == [str(ROOT / ENVIRONMENT), "-m", "toolkit", "build", "--dry-run"]
    assert as_run(f"{ENVIRONMENT} -m toolkit list") == ["bash", "-c", f"{ENVIRONMENT} -m toolkit list"]


@pytest.mark.parametrize("command", CHEAP)
def test_cheap_command_runs_as_written(command: str):
    require_tool((ROOT / ENVIRONMENT).is_file(), f"{ROOT / ENVIRONMENT} is missing: run `nox -s tests` once")
    # As a reader's shell would run it: from the checkout, no PYTHONPATH pointing at the toolkit; a session's
    # command with the environment's bin/ first on PATH, as the noxfile runs it.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str((ROOT / ENVIRONMENT).parent), env.get("PATH", "")])
    before = (ROOT / ".nox" / "toolkit" / ".created-by").read_text()
    proc = subprocess.run(as_run(command), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in said, f"`{command}` failed ({proc.returncode}):\n{said[-3000:]}"
    assert (ROOT / ".nox" / "toolkit" / ".created-by").read_text() == before   # the environment was left as it is


def test_readme_lists_every_command_no_session_runs():
    import argparse

    from toolkit.cli.main import build_parser

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    segment = text.split("Commands without a session")[1].split("Every option")[0]
    listed = set(re.findall(r"`([a-z-]+)[^`]*`", segment))
    commands = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)][0].choices
    by_session = {prefix[0] for kind, prefix in nox_sessions().values() if kind == "toolkit" and prefix}
    assert set(commands) - by_session - listed == set()
