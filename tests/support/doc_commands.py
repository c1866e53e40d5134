"""The documentation's shell commands, found and read as a shell would (tests/project/test_readme_commands.py
parses them, tests/project/test_doc_commands_run.py runs the cheap ones; tests/docs reads the same pages)."""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

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
            if re.match(r"^(nox -s |(\S*/)?python3? -m toolkit\b)", code):
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
    from toolkit.cli.main import build_parser

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


def is_toolkits(shown: Shown) -> bool:
    """Whether any part of the shown line is the toolkit's or nox's (pip, apt-get, cp, ... alone are not)."""
    return any(Path(argv[0]).name == "nox" or (PYTHON.match(argv[0]) and argv[1:3] == ["-m", "toolkit"])
               for line in expand_synopsis(shown.text) for argv in simple_commands(shell_words(line)))


ALL_SHOWN = [s for page in documentation_pages() for s in readme_commands(page)]
ALL_SHOWN = [s for s in ALL_SHOWN + recipe_comment_commands() if is_toolkits(s)]
