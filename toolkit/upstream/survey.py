"""`python -m toolkit survey`: what a revision asks of its build, read from a real configure.

The recipe's tree is fetched and patched as a build does (the pipeline up to `patch`), then configured into
its own folder (<work tree>/survey, fresh each time) with the build's defines and the dependency provider in
survey mode (pipeline/adapters/survey.py), and read here before the work tree's lock is let go. The result, as
JSON: every FetchContent request with what the tree declared for it, the find_package calls, the options the
tree declares, the libraries its install rules ship, the configure's outcome, and the API check of the units it
would compile. `bump` runs it inside the build root.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from toolkit.apicheck import apis, compiledb
from toolkit.pipeline import stages
from toolkit.pipeline.adapters import survey as survey_stage
from toolkit.pipeline.adapters.api_check import cmake_texts
from toolkit.pipeline.adapters.survey import Configured
from toolkit.pipeline.options import BuildOptions
from toolkit.sources.fetchcontent import read_report
from toolkit.sources.provider_survey import read_survey
from toolkit.upstream import exports, surface
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text

TAIL = 40


def survey(options: BuildOptions) -> JSON | None:
    """The survey's result; None in a dry run, which prints the plan (the pipeline's up to `patch`, then the
    survey's configure) and creates nothing. The survey configures into the work tree and reads it, which stays
    locked until it is done."""
    return stages.build_then(options, functools.partial(survey_stage.configure, read=_read), until="patch")


def _read(c: Configured) -> JSON:
    requests = read_survey(c.binary)
    result: dict[str, object] = {
        "recipe": str(c.recipe.file), "source": c.source, "features": c.features,
        "configure": {"ok": c.ok, "tail": _errors(c.output), "log": str(c.log)},
        "fetchcontent": [{"name": r.name, "served": r.served, "details": list(r.details)} for r in requests],
        "find_package": read_report(c.binary)["find_package"],
        "options": sorted(surface.tree_options(c.recipe, c.tree)),
        "libraries": surface.install_libraries(c.binary),
        "expected_libraries": [name for name, _ in c.expected],
        "exports": exports.declared(c.binary),
        "expected_exports": {name: list(symbols) for name, symbols in c.expected},
    }
    result["api_check"] = _api_check(c)
    return result


def _errors(output: str) -> list[str]:
    """The configure's error messages (CMake Error blocks), else its last lines."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("CMake Error")), None)
    return lines[start:start + TAIL] if start is not None else lines[-TAIL:]


def _api_check(c: Configured) -> JSON | None:
    if c.api_libraries is None:
        return None
    tree = c.tree
    try:
        files = compiledb.read(c.binary, tree)
        note = None
    except ToolkitError:
        # The configure stopped before writing compile_commands.json: read every source of the tree instead.
        files = compiledb.TreeFiles(tree.resolve(), sorted(p.resolve() for p in tree.rglob("*")
                                                           if p.suffix in (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp")
                                                           and ".git" not in p.parts))
        note = "the configure wrote no compile_commands.json: every C/C++ file of the tree was read"
    result = apis.check(files, list(c.api_libraries), cmake_texts(tree)).to_json()
    result["note"] = note
    return result


def write(result: JSON, out: Path | None) -> None:
    text = json.dumps(result, indent=2) + "\n"
    if out is None:
        print(text, end="")
    else:
        atomic_write_text(Path(out), text)
