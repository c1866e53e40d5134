"""The project's shape: what may sit at the top of toolkit/, how long a module and a function may be, and
what code and data must not name (absolute file:// paths, package mirrors' hosts)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.imports import imported_names
from tests.support.tools import ROOT, need

PACKAGE = ROOT / "toolkit"
TOP_LEVEL = {"__init__.py", "__main__.py"}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80

# The only way past the two limits: a module or function that is long because it holds a data table
# (not logic), listed with why: "toolkit/a/b.py" for a module, "toolkit/a/b.py::name" for a function
# (methods: "toolkit/a/b.py::Class.name"). Each reason starts with "data table: ". Keep it small.
EXEMPT: dict[str, str] = {}
MAX_EXEMPT = 3

# Hosts of package mirrors and registries. Where packages come from is the user's choice (options such as
# --mirror, the environment, the machine's own apt or pip configuration), never a host written into the
# toolkit's code or the project's data.
MIRROR_HOSTS = ("deb.debian.org", "ftp.debian.org", "security.debian.org", "httpredir.debian.org",
                "archive.ubuntu.com", "security.ubuntu.com", "ports.ubuntu.com",
                "pypi.org", "pypi.python.org", "files.pythonhosted.org")
MIRROR_FREE = ("toolkit", "recipes", "containers", "benchmarks")
FILE_URL_FREE = ("recipes", "benchmarks")


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def functions(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function, nested ones and methods included."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                found.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return found


def git_grep(patterns: tuple[str, ...], folders: tuple[str, ...], fixed: bool = True) -> list[str]:
    """`git grep` over the tracked files of `folders`: every matching line as path:line:text."""
    need("git")
    cmd = ["git", "-C", str(ROOT), "grep", "-n", "-I", "-F" if fixed else "-E"]
    for pattern in patterns:
        cmd += ["-e", pattern]
    proc = subprocess.run([*cmd, "--", *folders], capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.splitlines()


def test_top_of_toolkit_holds_only_the_entry_points():
    extra = sorted({p.name for p in PACKAGE.glob("*.py")} - TOP_LEVEL)
    assert not extra, (f"toolkit/ holds modules outside a package: {', '.join(extra)}; only "
                       f"{', '.join(sorted(TOP_LEVEL))} belong at the top (move the rest into their area's package)")


def test_no_module_over_the_line_limit():
    long = [f"{rel(p)}: {n} lines" for p in modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES and rel(p) not in EXEMPT]
    if long:
        pytest.fail(f"modules over {MAX_MODULE_LINES} lines (split them by concern):\n  " + "\n  ".join(long),
                    pytrace=False)


def test_no_function_over_the_line_limit():
    long = [f"{rel(p)}:{line}: {name}() is {n} lines" for p in modules() for name, line, n in functions(p)
            if n > MAX_FUNCTION_LINES and f"{rel(p)}::{name}" not in EXEMPT]
    if long:
        pytest.fail(f"functions over {MAX_FUNCTION_LINES} lines (split them):\n  " + "\n  ".join(long), pytrace=False)


def test_exemptions_are_few_data_tables_and_still_needed():
    assert len(EXEMPT) <= MAX_EXEMPT, f"more than {MAX_EXEMPT} exemptions: the limits no longer mean anything"
    for key, reason in EXEMPT.items():
        assert reason.startswith("data table: ") and len(reason) > len("data table: "), \
            f"{key}: exemptions are for data tables only, and say which"
        file, _, function = key.partition("::")
        path = ROOT / file
        assert path.is_file(), f"{key}: no such module"
        if function:
            lengths = {name: n for name, _, n in functions(path)}
            assert function in lengths, f"{key}: no such function"
            assert lengths[function] > MAX_FUNCTION_LINES, f"{key}: within the limit now, drop the exemption"
        else:
            assert len(path.read_text(encoding="utf-8").splitlines()) > MAX_MODULE_LINES, \
                f"{key}: within the limit now, drop the exemption"


def test_functions_are_measured_nested_and_in_classes(tmp_path):
    """The measuring itself: a method and a nested function are found, with their own lengths."""
    source = tmp_path / "m.py"
    source.write_text("class A:\n    def f(self):\n        def g():\n            return 1\n        return g\n"
                      "async def h():\n    pass\n")
    assert functions(source) == [("A.f", 2, 4), ("A.f.g", 3, 2), ("h", 6, 2)]


def test_no_absolute_file_url_in_recipes_and_benchmarks():
    found = git_grep(("file:///",), FILE_URL_FREE)
    if found:
        pytest.fail("absolute file:// paths (one machine's layout) in data and benchmarks; take the path from "
                    "an option, the environment or a path relative to the project:\n  " + "\n  ".join(found),
                    pytrace=False)


def test_no_package_mirror_host_in_code_or_data():
    pattern = r"(^|[^A-Za-z0-9-])(" + "|".join(re.escape(h) for h in MIRROR_HOSTS) + r")([^A-Za-z0-9.-]|$)"
    found = git_grep((pattern,), MIRROR_FREE, fixed=False)
    if found:
        pytest.fail("package mirror hosts written into code or data; mirrors come from options (--mirror), the "
                    "environment or the machine's own apt/pip configuration:\n  " + "\n  ".join(found),
                    pytrace=False)


def test_tests_mirror_the_packages_and_share_helpers_only_through_support():
    """Every package toolkit/X has its tests in tests/X; every folder of tests/ is a package (test file names
    may repeat across areas), and no test file imports another test file or a conftest (an import_module with a
    literal name counts too): shared helpers live in tests/support/, fixtures in conftest.py."""
    tests = ROOT / "tests"
    packages = [d.name for d in sorted((ROOT / "toolkit").iterdir()) if (d / "__init__.py").is_file()]
    assert not [f"tests/{name}/" for name in packages if not (tests / name).is_dir()], "packages without tests"
    folders = [d for d in sorted(tests.rglob("*")) if d.is_dir() and "__pycache__" not in d.parts
               and d.relative_to(tests).parts[0] != "data"]
    assert not [rel(d) for d in [tests, *folders] if not (d / "__init__.py").is_file()]
    crossing = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names = imported_names(node)
            if any(n.split(".")[-1].startswith("test_") or n.split(".")[-1] == "conftest" for n in names):
                crossing.append(f"{rel(path)}:{node.lineno}")
    assert not crossing, f"test files imported by others (move what they share to tests/support/): {crossing}"
