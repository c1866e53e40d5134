"""A Python that lacks one of the toolkit's declared dependencies (the system's, a bare venv) gets one error naming
the module, the dependency and the command that installs it, exit 2: not the internal-error line of a bug."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib

from tests.support.tools import ROOT
from toolkit.util.dependencies import declared, missing_dependency

# Run elsewhere (inside a smoke test's venv, inside a wheel), or imported only behind an ImportError guard.
NOT_THE_TOOLKITS = ("toolkit/smoke/inside/", "toolkit/wheel/templates/")
GUARDED = {"zstandard", "compression"}  # compression: the standard library's from Python 3.14


def test_a_python_without_the_dependencies_is_told_what_installs_them(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    python = tmp_path / "venv" / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "toolkit", "docs", "reference", "--check"], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    error, hint = proc.stderr.splitlines()
    requirements = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    named = next(r for r in requirements if error.endswith(f"from the toolkit's dependency {r}"))
    assert error.startswith(f"error: this Python ({python}) lacks the module ")
    assert hint == (f"  hint: install it: `{python} -m pip install '{named}'` (or, in the project, `{python} -m pip "
                    "install -e .` for every dependency)")


def test_an_undeclared_module_is_still_a_bug():
    assert missing_dependency(ModuleNotFoundError("No module named 'nosuch'", name="nosuch")) is None
    error = missing_dependency(ModuleNotFoundError("No module named 'elftools'", name="elftools.elf"))
    assert error is not None and "lacks the module elftools, from the toolkit's dependency pyelftools>=" in str(error)


def test_every_third_party_import_is_a_declared_dependency():
    undeclared = set()
    for path in sorted((ROOT / "toolkit").rglob("*.py")):
        if path.relative_to(ROOT).as_posix().startswith(NOT_THE_TOOLKITS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in ("toolkit", *GUARDED) and declared(top) is None:
                    undeclared.add(f"{path.relative_to(ROOT)}: {top}")
    assert undeclared == set(), "a missing one would be reported as a bug: declare it or map it in PROVIDED_BY"
