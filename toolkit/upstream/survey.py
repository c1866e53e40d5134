"""`python -m toolkit survey`: what a revision asks of its build, read from a real configure.

The recipe's tree is fetched and patched as a build does (the pipeline up to `patch`), then configured into
its own folder (<work tree>/survey, fresh each time) with the build's defines and the dependency provider in
survey mode. The result, as JSON: every FetchContent request with what the tree declared for it, the
find_package calls, the options the tree declares, the libraries its install rules ship, the configure's
outcome, and the API check of the units it would compile. `bump` runs it inside the build root.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from toolkit.apicheck import apis, compiledb
from toolkit.pipeline import stages
from toolkit.pipeline.adapters.api_check import cmake_texts, libraries
from toolkit.pipeline.adapters.configure import tree_configure_command
from toolkit.pipeline.build import Build
from toolkit.pipeline.options import BuildOptions
from toolkit.sources.fetchcontent import REPORT_NAME, read_report
from toolkit.sources.provider_survey import read_survey, survey_define
from toolkit.upstream import exports, surface
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text
from toolkit.util.process import run

TAIL = 40


def survey(options: BuildOptions) -> JSON | None:
    """The survey's result; None in a dry run, which prints the plan (the pipeline's up to `patch`, then the
    survey's configure) and creates nothing. The survey configures into the work tree, which stays locked until
    it is done."""
    with stages.built(options, until="patch") as b:
        return _survey(b, options.dry_run)


def _survey(b: Build, dry_run: bool) -> JSON | None:
    ws = b.workspace
    binary = ws.root / "survey"
    log_file = ws.root / "logs" / "survey.log"
    cmd = tree_configure_command(b, binary, {**survey_define(binary), "CMAKE_EXPORT_COMPILE_COMMANDS": "ON",
                                             "TOOLKIT_PROVIDER_REPORT": (binary / REPORT_NAME).as_posix()})
    if dry_run:
        log.stage("survey", "would run: a configure with the dependency provider in survey mode")
        for line in [f"toolchain {b.toolchain().describe()}", f"fresh CMake folder {binary} (removed first)",
                     "$ " + " ".join(cmd), f"its output -> {log_file}"]:
            print(f"  survey: {line}")
        return None
    # Fresh: FetchContent and the CMake cache remember earlier answers, which would hide requests.
    shutil.rmtree(binary, ignore_errors=True)
    # The configure's compilers are the recipe's toolchain (zig's wrappers are written, not installed).
    b.toolchain().prepare(b.toolchain_dir, b.fetch.cache.root)
    log.stage("survey", "$ " + " ".join(cmd))
    proc = run(cmd, "survey configure", check=False)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text(proc.stdout + proc.stderr, encoding="utf-8")
    requests = read_survey(binary)
    result: dict[str, object] = {
        "recipe": str(b.recipe.file), "source": b.source.describe(), "features": sorted(b.enabled()),
        "configure": {"ok": proc.returncode == 0, "tail": _errors(proc.stdout + proc.stderr),
                      "log": str(log_file)},
        "fetchcontent": [{"name": r.name, "served": r.served, "details": list(r.details)} for r in requests],
        "find_package": read_report(binary)["find_package"],
        "options": sorted(surface.tree_options(b.recipe, ws.source)),
        "libraries": surface.install_libraries(binary),
        "expected_libraries": [name for name, _ in b.expected()],
        "exports": exports.declared(binary),
        "expected_exports": {name: list(symbols) for name, symbols in b.expected()},
    }
    result["api_check"] = _api_check(b, binary, ws.source)
    return result


def _errors(output: str) -> list[str]:
    """The configure's error messages (CMake Error blocks), else its last lines."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("CMake Error")), None)
    return lines[start:start + TAIL] if start is not None else lines[-TAIL:]


def _api_check(b: Build, binary: Path, tree: Path) -> JSON | None:
    if b.recipe.api_check is None:
        return None
    try:
        files = compiledb.read(binary, tree)
        note = None
    except ToolkitError:
        # The configure stopped before writing compile_commands.json: read every source of the tree instead.
        files = compiledb.TreeFiles(tree.resolve(), sorted(p.resolve() for p in tree.rglob("*")
                                                           if p.suffix in (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp")
                                                           and ".git" not in p.parts))
        note = "the configure wrote no compile_commands.json: every C/C++ file of the tree was read"
    result = apis.check(files, libraries(b), cmake_texts(tree)).to_json()
    result["note"] = note
    return result


def write(result: JSON, out: Path | None) -> None:
    text = json.dumps(result, indent=2) + "\n"
    if out is None:
        print(text, end="")
    else:
        atomic_write_text(Path(out), text)
