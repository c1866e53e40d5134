"""Every toolkit command the documentation shows parses with the real argument parser.

Sources: the ```sh blocks and the inline `code` starting with `nox -s`, `python -m toolkit` or `python3 -m toolkit`
of every documentation page (README.md, CONTRIBUTING.md, docs/**/*.md, samples/umbrella-ep/README.md), and the
commands in comment lines of recipes/*.toml (`# .nox/toolkit/bin/python -m toolkit ...`, `# nox -s ...`). Shell
syntax is read as a shell would: continuation lines, comments after `#`, `$VAR` and `$(...)` (a placeholder path),
`&&`/`||`/`;`/`|`/parentheses between commands (only the toolkit's and nox's parts are checked; pip, apt-get, cp,
for, export, ... are not the toolkit's). Synopses are expanded: `[...]` is tried left out and put in, `a|b` each
way, an UPPERCASE or <angle> placeholder gets a value of its kind.

`nox -s SESSION -- ARGS` becomes the toolkit command that session runs, read from noxfile.py (an unknown
session fails); the tests session runs pytest, whose `-m`/`-k` expressions must compile (and `-m` name
registered markers). `container` passes the rest on: with `--root` to `python -m toolkit SESSION ARGS`,
else to the image's runner (nox by default), and that inner command is checked too.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import tomllib

import pytest

from tests.support.doc_commands import (
    ALL_SHOWN,
    PLACEHOLDER_PATH,
    PLACEHOLDERS,
    Run,
    Shown,
    expand_synopsis,
    fill_placeholders,
    nox_run,
    runs_of,
    shell_words,
    simple_commands,
)
from tests.support.tools import ROOT

# -- checking ------------------------------------------------------------------------------------------------

def parse_toolkit(argv: list[str], via: str) -> argparse.Namespace | None:
    """toolkit.cli.main's own parsing of argv (after its feature-flag expansion); fails the test naming `via`."""
    from toolkit.cli.main import build_parser, expand_feature_flags
    from toolkit.util.errors import ToolkitError

    parser = build_parser()
    if not argv:
        return None  # `python -m toolkit ...`: no command shown, nothing more to check than the parser
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            return parser.parse_args(expand_feature_flags(argv))
    except SystemExit as exc:
        if exc.code == 0:   # --help / --version
            return None
        said = err.getvalue().strip().splitlines()
        pytest.fail(f"{via}: `python -m toolkit {shlex.join(argv)}` does not parse: {said[-1] if said else exc}",
                    pytrace=False)
    except ToolkitError as exc:
        pytest.fail(f"{via}: `python -m toolkit {shlex.join(argv)}`: {exc}", pytrace=False)


def registered_markers() -> set[str]:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        lines = tomllib.load(handle)["tool"]["pytest"]["ini_options"].get("markers", [])
    return {line.split(":", 1)[0].split("(", 1)[0].strip() for line in lines}


def check_pytest(argv: list[str], via: str) -> None:
    from _pytest.mark.expression import Expression

    known = registered_markers() | {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}
    for option, value in zip(argv, argv[1:], strict=False):
        if option in ("-m", "-k"):
            try:
                Expression.compile(value)
            except (SyntaxError, ValueError) as exc:  # pytest's own parse error (ParseError before pytest 8.4)
                pytest.fail(f"{via}: pytest {option} {value!r} does not parse: {exc}", pytrace=False)
            if option == "-m":
                names = set(re.findall(r"[A-Za-z_][\w.-]*", value)) - {"and", "or", "not"}
                assert names <= known, f"{via}: pytest -m {value!r} names unregistered markers {sorted(names - known)}"


def check_run(run: Run) -> None:
    if run.kind == "pytest":
        check_pytest(list(run.argv), run.via)
        return
    if run.kind == "lint":
        # ruff and mypy read their settings from pyproject.toml; the session passes nothing else on.
        assert not run.argv, f"{run.via}: this session takes no arguments"
        return
    args = parse_toolkit(list(run.argv), run.via)
    if args is not None and getattr(args, "command", None) == "container":
        check_run(inner_run(args, run.via))


def inner_run(args: argparse.Namespace, via: str) -> Run:
    """What `container` runs inside: `python -m toolkit SESSION ARGS` in a root, else the image's runner."""
    rest = args.args[1:] if args.args[:1] == ["--"] else list(args.args)
    if args.root:
        return Run("toolkit", (args.session, *rest), f"{via}, inside root {args.root}")
    runner = args.runner
    if runner is None:
        from toolkit.cli.release import load_settings

        runner = load_settings(args.recipe).container.runner
    if runner == "toolkit":
        return Run("toolkit", (args.session, *rest), f"{via}, inside the image")
    return nox_run(["nox", "-s", args.session, "--", *rest], f"{via}, inside the image")


def check_shown(shown: Shown) -> int:
    """Checks every toolkit/nox part of every variant; returns how many runs were checked."""
    checked = 0
    for line in expand_synopsis(shown.text):
        for argv in simple_commands(shell_words(line)):
            for run in runs_of(fill_placeholders(argv), f"{shown.where}: {line}"):
                check_run(run)
                checked += 1
    return checked


def _id(shown: Shown) -> str:
    text = shown.text if len(shown.text) <= 70 else shown.text[:67] + "..."
    return f"{shown.where} {text}"


@pytest.mark.parametrize("shown", ALL_SHOWN, ids=[_id(s) for s in ALL_SHOWN])
def test_shown_command_parses(shown: Shown, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # relative paths in commands (recipes/x.toml) are the project's
    assert check_shown(shown) >= 1


def test_the_documentation_shows_commands_of_both_kinds():
    """The collection itself: README's blocks, its inline code (a span over a line break too) and the
    recipes' comments are all read."""
    texts = [s.text for s in ALL_SHOWN]
    assert "nox -s build -- --with-hipdnn" in texts
    assert "nox -s build -- --recipe onnxruntime-rocm-ep --until compile-check" in texts  # inline, over a line break
    assert any(t.startswith("nox -s container -- release --recipe umbrella-ep-real --only rocm7-glibc2.28-hipdnn")
               for t in texts)
    # over a line break:
    assert any(t.startswith(".nox/toolkit/bin/python -m toolkit repair WHEEL [--recipe R]") for t in texts)
    assert any(t.startswith("nox -s container -- --root debian-sid-rocm build --recipe umbrella-ep-real "
                            "--mirror file://$PWD") for t in texts)  # continuation line joined
    assert any(s.where.startswith("recipes/") for s in ALL_SHOWN)
    pages = {s.where.split(":")[0] for s in ALL_SHOWN}
    assert {"README.md", "CONTRIBUTING.md", "docs/guides/releasing-the-real-ep.md",
            "docs/guides/writing-a-recipe.md", "docs/reference/sessions.md"} <= pages
    assert not any(t.startswith(("python3 -m pip", "for f in", "export ")) for t in texts)  # not the toolkit's


def test_shell_reading_and_synopses():
    words = shell_words("nox -s wheel && mkdir -p .whl && (cd .gl && apt-get $o download x)  # note")
    assert simple_commands(words) == [["nox", "-s", "wheel"], ["mkdir", "-p", ".whl"], ["cd", ".gl"],
                                      ["apt-get", PLACEHOLDER_PATH, "download", "x"]]
    assert shell_words("python -m toolkit build --source URL#sha256=HEX") == [
        "python", "-m", "toolkit", "build", "--source", "URL#sha256=HEX"]
    assert simple_commands(shell_words("PYTHONPATH=/x python3 -m toolkit list")) == [
        ["python3", "-m", "toolkit", "list"]]
    assert expand_synopsis("toolkit patch check|apply S [--phase base|hipified|all]") == [
        "toolkit patch check S ", "toolkit patch apply S ", "toolkit patch check S --phase base",
        "toolkit patch apply S --phase hipified", "toolkit patch apply S --phase all"]
    assert fill_placeholders(["fetch", "URL", "--sha256", "HEX", "--jobs", "N", "..."]) == [
        "fetch", PLACEHOLDERS["URL"], "--sha256", "0" * 64, "--jobs", "2"]


def test_a_command_that_does_not_parse_fails_naming_where_it_was_shown():
    with pytest.raises(pytest.fail.Exception, match=r"README\.md:7: .*`python -m toolkit build --no-such-option`"):
        check_shown(Shown("README.md:7", "python -m toolkit build --no-such-option"))
    with pytest.raises(AssertionError, match=r"README\.md:8: .*nox has no session 'no-such-session'"):
        check_shown(Shown("README.md:8", "nox -s no-such-session"))
    # container passes the rest on: a bad inner command fails too.
    with pytest.raises(pytest.fail.Exception, match=r"inside root debian-sid-rocm.*build --bogus"):
        check_shown(Shown("README.md:9", "nox -s container -- --root debian-sid-rocm build --bogus"))
    assert check_shown(Shown("README.md:10", "pip install nox && nox -s hipify -- -q")) == 1
    # A command named without its arguments must still exist.
    assert check_shown(Shown("docs/x.md:1", "python -m toolkit patch check")) == 1
    with pytest.raises(pytest.fail.Exception, match=r"docs/x\.md:2: .*no-such-command"):
        check_shown(Shown("docs/x.md:2", "python -m toolkit no-such-command"))
    # The tests session runs pytest: its marker expression must parse and name registered markers.
    assert check_shown(Shown("README.md:11", 'nox -s tests -- -m "not buildroot and not network"')) == 1
    with pytest.raises(AssertionError, match=r"unregistered markers \['slow'\]"):
        check_shown(Shown("README.md:12", 'nox -s tests -- -m "not slow"'))
    with pytest.raises(pytest.fail.Exception, match=r"pytest -m 'not \(buildroot' does not parse"):
        check_shown(Shown("README.md:13", 'nox -s tests -- -m "not (buildroot"'))
