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
import ast
import contextlib
import io
import itertools
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.tools import ROOT

PLACEHOLDER_PATH = "/tmp/readme-placeholder"
# Values for UPPERCASE placeholders whose option checks its value while parsing; any other gets a path.
PLACEHOLDERS = {"N": "2", "HEX": "0" * 64, "ID": "cp311-cdna", "F": "hipdnn", "R": "amdgpu-ep",
                "NAME": "amdgpu-ep", "URL": "https://example.invalid/source.tar.gz", "COMMAND": "list",
                "SESSION": "build", "STAGE": "patch"}
SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;"}
PYTHON = re.compile(r"^(.*/)?python(3(\.\d+)?)?$")


@dataclass(frozen=True)
class Shown:
    where: str      # file:line
    text: str       # the command as shown, continuation lines joined
    typed: bool = False  # in a ```sh block or a recipe's comment: a line to type as it stands, not a mention


# -- finding the commands ---------------------------------------------------------------------------------

def _join_continuations(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in lines:
        if pending is not None:
            number, line = pending[0], pending[1] + " " + line.strip()
        if line.rstrip().endswith("\\"):
            pending = (number, line.rstrip()[:-1].rstrip())
            continue
        pending = None
        out.append((number, line))
    if pending is not None:
        out.append(pending)
    return out


def documentation_pages() -> list[Path]:
    """Every page whose commands are checked."""
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md")),
            ROOT / "samples" / "umbrella-ep" / "README.md"]


def readme_commands(path: Path = ROOT / "README.md") -> list[Shown]:
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    lines = text.splitlines()
    shown: list[Shown] = []
    prose: list[tuple[int, str]] = []
    block: list[tuple[int, str]] | None = None
    fence_lang = None
    for number, line in enumerate(lines, 1):
        fence = re.match(r"^\s*```\s*(\S*)", line)
        if fence and block is None:
            block, fence_lang = [], fence.group(1)
            continue
        if fence and block is not None:
            if fence_lang in ("sh", "bash", "shell", "console"):
                for n, t in _join_continuations(block):
                    t = re.sub(r"(^|\s)#.*$", "", t).strip()   # a comment after the command
                    if t:
                        shown.append(Shown(f"{name}:{n}", " ".join(t.split()), typed=True))
            block, fence_lang = None, None
            continue
        if block is not None:
            block.append((number, line))
        else:
            prose.append((number, line))
    # Inline code may run over a line break: read each paragraph as one text.
    paragraph: list[tuple[int, str]] = []
    for number, line in [*prose, (len(lines) + 1, "")]:
        if line.strip():
            paragraph.append((number, line))
            continue
        joined = "\n".join(t for _, t in paragraph)
        starts = list(itertools.accumulate([0] + [len(t) + 1 for _, t in paragraph]))
        for match in re.finditer(r"(?<!`)`([^`]+)`(?!`)", joined):
            code = " ".join(match.group(1).split())
            if re.match(r"^(nox -s |python3? -m toolkit\b)", code):
                row = max(i for i, s in enumerate(starts[:-1]) if s <= match.start())
                shown.append(Shown(f"{name}:{paragraph[row][0]}", code))
        paragraph = []
    return shown


def recipe_comment_commands(folder: Path = ROOT / "recipes") -> list[Shown]:
    shown = []
    for path in sorted(folder.glob("*.toml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        comment = [(n, line[1:]) for n, line in enumerate(lines, 1) if line.startswith("#")]
        for number, text in _join_continuations(comment):
            if re.match(r"^\s+((\S*/)?python3? -m toolkit|nox -s)\s", text):
                shown.append(Shown(f"recipes/{path.name}:{number}", text.strip(), typed=True))
    return shown


# -- from shell text to argument lists ----------------------------------------------------------------------

def expand_synopsis(text: str) -> list[str]:
    """Concrete command lines for a synopsis: `[x]` left out and put in, `a|b` each way (a `|` with no space
    around it is a choice; with spaces, a pipe)."""
    choices = re.compile(r"[^\s|\[\]]+(?:\|[^\s|\[\]]+)+")
    widest = max((len(m.group(0).split("|")) for m in choices.finditer(text)), default=1)
    variants = []
    for optional, pick in itertools.product((False, True), range(widest)):
        line = re.sub(r"\[([^\[\]]*)\]", lambda m, optional=optional: m.group(1) if optional else "", text)
        line = choices.sub(lambda m, pick=pick: m.group(0).split("|")[min(pick, len(m.group(0).split("|")) - 1)],
                           line)
        if line not in variants:
            variants.append(line)
    return variants


def shell_words(text: str) -> list[str]:
    """The words of a shell line: comments dropped, `$(...)`, `$VAR` and <placeholders> replaced."""
    text = re.sub(r"(^|\s)#.*$", "", text)
    text = re.sub(r"\$\([^)]*\)|\$\{\w+\}|\$\w+", PLACEHOLDER_PATH, text)
    text = re.sub(r"<([\w.-]+)>", lambda m: f"{PLACEHOLDER_PATH}/{m.group(1)}", text)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def simple_commands(words: list[str]) -> list[list[str]]:
    """Split at && || ; | & ( ): each simple command, its leading VAR=value assignments dropped."""
    commands, current = [], []
    for word in [*words, ";"]:
        if word in SEPARATORS:
            while current and re.match(r"^[A-Za-z_]\w*=", current[0]):
                current.pop(0)
            if current:
                commands.append(current)
            current = []
        else:
            current.append(word)
    return commands


def fill_placeholders(argv: list[str]) -> list[str]:
    out = []
    for word in argv:
        if word in ("...", "ARGS"):
            continue  # "and so on"; a session's arguments, whatever they are
        name, eq, value = word.partition("=")
        if eq and name.startswith("--") and re.fullmatch(r"[A-Z][A-Z0-9_]*", value):
            word = f"{name}={PLACEHOLDERS.get(value, PLACEHOLDER_PATH)}"
        elif re.fullmatch(r"[A-Z][A-Z0-9_]*", word):
            word = PLACEHOLDERS.get(word, PLACEHOLDER_PATH)
        out.append(word)
    return out


# -- what a command runs ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    kind: str           # "toolkit", "pytest" or "lint"
    argv: tuple[str, ...]
    via: str            # how it was reached, for messages


def nox_sessions(noxfile: Path = ROOT / "noxfile.py") -> dict[str, tuple[str, tuple[str, ...]]]:
    """session name -> ("toolkit", ARGS) for `_toolkit(session, *ARGS)`, ("pytest", ()) for `-m pytest`."""
    sessions = {}
    for node in ast.parse(noxfile.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        name = None
        for deco in node.decorator_list:
            call = deco if isinstance(deco, ast.Call) else None
            func = call.func if call else deco
            if isinstance(func, ast.Attribute) and func.attr == "session":
                name = node.name
                for kw in call.keywords if call else ():
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                        name = kw.value.value
        if name is None:
            continue
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            args = [a.value for a in call.args[1:] if isinstance(a, ast.Constant)]
            if call.func.id == "_toolkit":
                sessions[name] = ("toolkit", tuple(args))
            elif call.func.id == "_run" and args[:2] == ["-m", "pytest"]:
                sessions[name] = ("pytest", ())
            elif call.func.id == "_run" and args[:2] in (["-m", "ruff"], ["-m", "mkdocs"]):
                sessions[name] = ("lint", ())   # lint and docs: fixed commands, no arguments
    return sessions


def nox_run(argv: list[str], via: str) -> Run:
    """`nox [options] -s SESSION [-- ARGS]` as the command its session runs."""
    head, _, posargs = argv[1:], None, []
    if "--" in head:
        at = head.index("--")
        head, posargs = head[:at], head[at + 1:]
    session = None
    for i, word in enumerate(head):
        if word in ("-s", "--session", "--sessions", "-e") and i + 1 < len(head):
            session = head[i + 1]
        elif word.startswith("--session="):
            session = word.split("=", 1)[1]
    assert session is not None, f"{via}: `{shlex.join(argv)}` names no session (-s SESSION)"
    sessions = nox_sessions()
    assert session in sessions, f"{via}: nox has no session {session!r} (noxfile.py has {', '.join(sorted(sessions))})"
    kind, prefix = sessions[session]
    if kind == "toolkit" and not posargs and "--" not in argv:
        # The session named without arguments (`nox -s container`): its command must exist; arguments it
        # needs are not the mention's to show.
        return Run(kind, (*prefix, "--help"), f"{via} (nox -s {session}, named without arguments)")
    return Run(kind, (*prefix, *posargs), f"{via} (nox -s {session})")


def _parses(argv: list[str]) -> bool:
    from toolkit.cli import build_parser

    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(argv)
    except SystemExit:
        return False
    return True


def runs_of(argv: list[str], via: str) -> list[Run]:
    """The toolkit/pytest runs a simple command stands for ([] when it is not the toolkit's or nox's)."""
    if Path(argv[0]).name == "nox":
        return [nox_run(argv, via)]
    if PYTHON.match(argv[0]) and argv[1:3] == ["-m", "toolkit"]:
        if argv[3:] and all(re.fullmatch(r"[a-z][a-z-]*", word) for word in argv[3:]) and \
                not _parses(argv[3:]):
            # A command named without its arguments (`python -m toolkit bump` in a table, `patch check` in a
            # description): the command must exist; the arguments it needs are not the mention's to show.
            return [Run("toolkit", (*argv[3:], "--help"), f"{via} (named without arguments)")]
        return [Run("toolkit", tuple(argv[3:]), via)]
    return []


# -- checking ------------------------------------------------------------------------------------------------

def parse_toolkit(argv: list[str], via: str) -> argparse.Namespace | None:
    """toolkit.cli's own parsing of argv (after its feature-flag expansion); fails the test naming `via`."""
    from toolkit.cli import build_parser, expand_feature_flags
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
        from toolkit.release.cli import load_settings

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


def is_toolkits(shown: Shown) -> bool:
    """Whether any part of the shown line is the toolkit's or nox's (pip, apt-get, cp, ... alone are not)."""
    return any(Path(argv[0]).name == "nox" or (PYTHON.match(argv[0]) and argv[1:3] == ["-m", "toolkit"])
               for line in expand_synopsis(shown.text) for argv in simple_commands(shell_words(line)))


ALL_SHOWN = [s for page in documentation_pages() for s in readme_commands(page)]
ALL_SHOWN = [s for s in ALL_SHOWN + recipe_comment_commands() if is_toolkits(s)]


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
    assert any(t.startswith("nox -s container -- release --recipe umbrella-ep-real --only glibc2.28-hipdnn")
               for t in texts)
    assert any(t.startswith("python -m toolkit repair WHEEL [--recipe R]") for t in texts)  # over a line break
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
