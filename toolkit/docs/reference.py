"""Writes docs/reference/*.md from the code, and says which committed pages differ from what the code gives.

    python -m toolkit docs reference           # write the pages
    python -m toolkit docs reference --check   # exit 1 naming the pages that are out of date

Pages: commands.md (the argument parser), recipe-keys.md (the recipe classes, toolkit/docs/recipe_keys.py),
environment.md (toolkit/util/envvars.py), stages.md (toolkit/pipeline/stages.py), sessions.md (noxfile.py).
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable
from pathlib import Path

from toolkit.docs import recipe_keys
from toolkit.docs.markdown import cell, table
from toolkit.util.errors import RUN_TOOLKIT
from toolkit.util.fsutil import atomic_write_text

PROJECT_ROOT = Path(__file__).resolve().parents[2]
GENERATED = f"Generated from the code by `{RUN_TOOLKIT} docs reference`; do not edit."


def render_commands(command_line: argparse.ArgumentParser) -> str:
    from toolkit.docs.commands import render

    return render(command_line)


def _default_of(key: recipe_keys.Key) -> str:
    if key.computed:
        return cell(key.computed)
    if not key.default:
        return ""
    return f"`{key.default}`" if len(key.default) <= 80 else f"`{key.default[:77]}...`"


def render_recipe_keys() -> str:
    keys = recipe_keys.recipe_keys()
    lines = ["# Recipe keys", "", GENERATED, "",
             "Every key a recipe (`recipes/*.toml`) may hold. Each is a field of the dataclass its table is read "
             "into (`Recipe` in `toolkit/recipe/load.py`, and the section classes beside it in `toolkit/recipe/`): "
             "the field's type is the key's type (a `Literal` gives its choices), the field's default its default, "
             "and its `doc()` metadata what it means. A key of an array of tables is written "
             "`section.array[].key`, of a table of tables `section.<name>.key`; *required* means required in its "
             "table when that table is given. An unknown key, a wrong type or a value outside the choices fails "
             "before anything runs, naming the file and the key. See [Writing a recipe]"
             "(../guides/writing-a-recipe.md).", ""]
    sections: dict[str, list[recipe_keys.Key]] = {}
    for key in keys.values():
        sections.setdefault(key.section, []).append(key)
    for section, members in sections.items():
        head = keys.get(section)
        title = f"[[{section}]]" if head is not None and head.type == "array of tables" else f"[{section}]"
        lines += [f"## `{title}`", ""]
        if head is not None:
            lines += [cell(head.meaning), ""]
        rows = []
        for key in members:
            if key.path == section:
                continue
            kind = key.type + (": " + ", ".join(f"`{c}`" for c in key.choices) if key.choices else "")
            rows.append([f"`{key.path}`", cell(kind), _default_of(key), "yes" if key.required else "",
                         cell(key.meaning)])
        if rows:
            lines += table(["key", "type", "default", "required", "meaning"], rows) + [""]
    return "\n".join(lines).rstrip() + "\n"


def render_environment() -> str:
    from toolkit.util.envvars import ENVIRONMENT

    lines = ["# Environment variables", "", GENERATED + " The table is `toolkit/util/envvars.py`.", ""]
    rows = [[f"`{v.name}`", cell(v.read_by), cell(v.meaning)] for v in ENVIRONMENT]
    lines += table(["variable", "read by", "meaning"], rows)
    return "\n".join(lines) + "\n"


def render_stages() -> str:
    from toolkit.pipeline.stages import stage_table

    lines = ["# Stages", "", GENERATED + " The order is `toolkit/pipeline/stages.py`'s.", "",
             "`build` runs them in this order, each skipped when its inputs are unchanged; `--until STAGE` stops "
             "after one. A recipe's `[recipe] stages` names the ones it runs; without it, every stage that "
             "applies: hipify only with `[hipify]`, patch-hipified only when the series has `hipified` patches, "
             "compile-check only with `[compile_check]`, api-check only with `[api_check]`, wheel and repair "
             "only with `--wheel`. See [Stages and caching](../explanation/stages-and-caching.md).", ""]
    lines += table(["stage", "what it does", "provided by"],
                   [[f"`{name}`", cell(summary), f"`{module}`"] for name, summary, module in stage_table()])
    return "\n".join(lines) + "\n"


def render_sessions(project_root: Path = PROJECT_ROOT) -> str:
    from toolkit.docs.sessions import sessions

    lines = ["# Sessions", "", GENERATED + " Read from `noxfile.py`.", "",
             "`nox -s SESSION -- ARGS` runs the command in the second column with `ARGS` after it, in the one "
             "environment every session shares (`.nox/toolkit`).", ""]
    rows = [[f"`nox -s {s.name}`", "<br>".join(f"`{r}`" for r in s.runs), cell(s.doc)]
            for s in sessions(project_root / "noxfile.py")]
    lines += table(["session", "runs", "what it is for"], rows)
    return "\n".join(lines) + "\n"


# The pages that read the code themselves; commands.md is rendered from the command line the caller hands in
# (toolkit.cli.main.build_parser()): the cli imports the `docs` command, so nothing here imports it.
_FROM_THE_CODE: dict[str, Callable[[], str]] = {
    "recipe-keys.md": render_recipe_keys,
    "environment.md": render_environment,
    "stages.md": render_stages,
    "sessions.md": render_sessions,
}
PAGES = ("commands.md", *_FROM_THE_CODE)


def render(name: str, command_line: argparse.ArgumentParser) -> str:
    """Page `name` as the code gives it now."""
    return render_commands(command_line) if name == "commands.md" else _FROM_THE_CODE[name]()


def reference_dir(project_root: Path = PROJECT_ROOT) -> Path:
    return project_root / "docs" / "reference"


def stale_pages(command_line: argparse.ArgumentParser, folder: Path | None = None) -> list[str]:
    """The generated pages whose committed text differs from what the code gives now."""
    folder = folder or reference_dir()
    return [name for name in PAGES if not (folder / name).is_file()
            or (folder / name).read_text(encoding="utf-8") != render(name, command_line)]


def first_difference(name: str, command_line: argparse.ArgumentParser, folder: Path | None = None) -> str:
    """Where page `name` in `folder` first differs from what the code gives: line N, both sides shortened."""
    path = (folder or reference_dir()) / name
    have = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    want = render(name, command_line).splitlines()
    for number, (old, new) in enumerate(itertools.zip_longest(have, want, fillvalue=""), 1):
        if old != new:
            return f"line {number}: has {old[:100]!r}, the code gives {new[:100]!r}"
    return "no line differs"


def write_pages(command_line: argparse.ArgumentParser, folder: Path | None = None) -> list[Path]:
    folder = folder or reference_dir()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in PAGES:
        path = folder / name
        text = render(name, command_line)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            atomic_write_text(path, text)
            written.append(path)
    return written
