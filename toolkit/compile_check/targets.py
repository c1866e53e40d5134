"""A recipe's [compile_check] targets, checked before a build starts (in a dry run too; pipeline/validate.py),
as `--gpu-targets` is: a target the compiler rejects would otherwise fail every HIP unit, one at a time.

The compile check compiles with the build root's hipcc, so its compiler gives the verdict (the host's may be
older: bookworm's clang 15 rejects gfx942, which the sid root's clang 21 accepts). Where the root is not made
yet, nothing is made for a check: only the form of a target ID is checked (`gfx` and a hex number, then
features such as `:xnack+`).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path

from toolkit.binary.hip import HipToolchain, Runner, supported_processors, unsupported_targets
from toolkit.buildroot.make import ENV_BUILDROOT, root_path
from toolkit.buildroot.sandbox import run as run_sandboxed
from toolkit.compile_check.run import ROOT_NAME
from toolkit.recipe import packageset
from toolkit.recipe.compile_check import CompileCheckSettings
from toolkit.util.errors import ToolkitError

_TARGET_ID = re.compile(r"gfx[0-9a-f]+(-generic)?(:[a-z0-9-]+[+-])*")


def made_root() -> Path | None:
    """The root the compile check would use, when it exists already ($TOOLKIT_BUILDROOT, else the cached one)."""
    given = os.environ.get(ENV_BUILDROOT)
    path = Path(given).expanduser() if given else root_path(packageset.load(ROOT_NAME))
    return path.resolve() if (path / "usr").is_dir() else None


def check_targets(settings: CompileCheckSettings, recipe_file: Path) -> None:
    where = f"{recipe_file}: key 'compile_check.targets'"
    root = made_root()
    clang = _root_clang(root) if root is not None else None
    if root is None or clang is None:
        malformed = [t for t in settings.targets if not _TARGET_ID.fullmatch(t)]
        if malformed:
            raise ToolkitError(f"{where}: {', '.join(malformed)}: not an AMD GPU target ID",
                               hint="AMD GPU processors are named gfx and a number (gfx942, gfx90a, gfx1100), with "
                                    "optional features (gfx90a:xnack+); once the build root is made, this error "
                                    "lists the processors its compiler supports")
        return
    bad, supported = _root_verdict(root, clang, settings.targets)
    if bad:
        raise ToolkitError(f"{where}: the build root's {clang} rejects " + "; ".join(bad),
                           hint="processors it supports: " + (", ".join(supported) or "none listed"))


def _in(root: Path) -> Runner:
    # Without the toolkit cache run_in_root binds: a dry run creates nothing there.
    def runner(argv: list[str], what: str) -> subprocess.CompletedProcess[str]:
        return run_sandboxed(root, argv, check=False, capture=True, network=False, what=what)
    return runner


@functools.cache
def _root_clang(root: Path) -> str | None:
    """The clang the root's hipcc runs (hipconfig says where), or None when it cannot be asked (no hipconfig in
    the root, no bwrap on this machine): the real run reports that, the check falls back to the form."""
    try:
        proc = _in(root)(["hipconfig", "--hipclangpath"], "asking hipconfig for its clang")
    except ToolkitError:
        return None
    folder = proc.stdout.strip() if proc.returncode == 0 else ""
    return f"{folder}/clang++" if folder.startswith("/") else None


@functools.cache
def _root_verdict(root: Path, clang: str, targets: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(the compiler's error per rejected target, the processors it lists when any is rejected); asked once a
    process: compile-check --engine both makes the stage once per engine."""
    toolchain = HipToolchain("debian", Path(clang), "")
    bad = unsupported_targets(toolchain, targets, _in(root))
    return bad, (supported_processors(toolchain, _in(root)) if bad else [])
