"""The recipe's [hipify] section: which files to convert, how, and where the outputs go.

    [hipify]
    engine = "builtin"                 # or "hipify-perl" (ROCm's, where installed)
    perl_warnings = true               # hipify-perl's per-line warnings (false: -quiet-warnings, same output)
    launch_syntax = "chevron"          # or "hipLaunchKernelGGL"
    dnn = "miopen"                     # or "hipdnn"
    strict = true                      # unmapped CUDA identifiers fail the stage
    include = ["**/*.cu", "**/*.cuh", "**/*.h"]
    overlay = ["src/rocm/**/*.cc"]     # hand-written files copied unconverted over the output
    suffixes = { ".cu" = ".hip" }
    [[hipify.rename]]                  # substring rename of every path component
    from = "cuda"
    to = "rocm"
    [[hipify.exclude]]
    glob = "**/cudnn_*.cc"
    reason = "cuDNN frontend graphs have no MIOpen equivalent; the ROCm EP has its own"
    [[hipify.substitute]]              # applied to the whole output after conversion
    from = "kCudaExecutionProvider"
    to = "kRocmExecutionProvider"
    regex = false
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.util.globs import glob_match

if TYPE_CHECKING:  # recipes only: `python -m toolkit hipify` starts without the TOML reader
    from toolkit.util.tomlread import Table

ENGINES = ("builtin", "hipify-perl")
LAUNCH_SYNTAXES = ("chevron", "hipLaunchKernelGGL")
DNN_TARGETS = ("miopen", "hipdnn")
DEFAULT_INCLUDE = (
    "**/*.cu", "**/*.cuh", "**/*.h", "**/*.hpp", "**/*.hh", "**/*.inl",
    "**/*.cc", "**/*.cpp", "**/*.cxx", "**/*.c",
)


@dataclass(frozen=True)
class Exclude:
    glob: str
    reason: str


@dataclass(frozen=True)
class Rename:
    """Replace `from_` by `to` inside every path component (directories and file names)."""
    from_: str
    to: str


@dataclass(frozen=True)
class Substitution:
    from_: str
    to: str
    regex: bool = False
    glob: str = "**"


@dataclass(frozen=True)
class HipifySettings:
    engine: str = "builtin"
    launch_syntax: str = "chevron"
    dnn: str = "miopen"
    strict: bool = False
    include: tuple[str, ...] = DEFAULT_INCLUDE
    overlay: tuple[str, ...] = ()
    exclude: tuple[Exclude, ...] = ()
    renames: tuple[Rename, ...] = ()
    suffixes: tuple[tuple[str, str], ...] = ()
    substitutions: tuple[Substitution, ...] = ()
    hipify_perl: str = "hipify-perl"
    perl_warnings: bool = True
    # When set, an input whose output path matches `unit_globs` (a translation unit) is converted only if
    # that path is listed: a sample's compile check needs its units and every header, not the whole tree.
    only_units: tuple[str, ...] = ()
    unit_globs: tuple[str, ...] = ()
    recipe: str = ""  # the recipe file the settings come from, for messages ('' on the command line)

    # -- file selection and layout ---------------------------------------------------------------
    def excluded(self, rel: str) -> Exclude | None:
        for rule in self.exclude:
            if glob_match(rule.glob, rel):
                return rule
        return None

    def included(self, rel: str) -> bool:
        return any(glob_match(g, rel) for g in self.include)

    def left_out(self, out_rel: str) -> bool:
        """A translation unit outside `only_units` (when that is set)."""
        return bool(self.only_units) and out_rel not in self.only_units and any(
            glob_match(g, out_rel) for g in self.unit_globs)

    def overlaid(self, rel: str) -> bool:
        return any(glob_match(g, rel) for g in self.overlay)

    def rename_path(self, rel: str) -> str:
        """The output path for an input path (posix, relative): component renames, then the suffix."""
        parts = rel.split("/")
        for rule in self.renames:
            parts = [p.replace(rule.from_, rule.to) for p in parts]
        name = parts[-1]
        for old, new in self.suffixes:
            if name.endswith(old):
                parts[-1] = name[: -len(old)] + new
                break
        return "/".join(parts)

    def options(self) -> dict[str, str]:
        """The settings that choose mapping-table families (their `when`)."""
        return {"dnn": self.dnn}

    def digest(self) -> str:
        """Everything that changes an output's bytes; part of every cached file's key."""
        data = asdict(self)
        for selection_only in ("strict", "only_units", "unit_globs", "recipe"):
            data.pop(selection_only)
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def from_table(t: Table, recipe_dir: Path) -> HipifySettings:
    """Read the recipe's [hipify] table strictly (unknown keys are errors)."""
    engine = t.str("engine", "builtin", choices=ENGINES)
    launch = t.str("launch_syntax", "chevron", choices=LAUNCH_SYNTAXES)
    dnn = t.str("dnn", "miopen", choices=DNN_TARGETS)
    strict = t.bool("strict", False)
    include = tuple(t.str_list("include", list(DEFAULT_INCLUDE)))
    overlay = tuple(t.str_list("overlay", []))
    perl = t.str("hipify_perl", "hipify-perl")
    perl_warnings = t.bool("perl_warnings", True)
    if "/" in perl and not Path(perl).is_absolute():
        perl = str((recipe_dir / perl).resolve())

    excludes = []
    for sub in t.tables("exclude", []):
        glob = sub.str("glob")
        reason = sub.str("reason")
        if not reason.strip():
            raise sub.error("reason", "must say why the files are excluded")
        sub.done()
        excludes.append(Exclude(glob, reason))

    renames = []
    for sub in t.tables("rename", []):
        old = sub.str("from")
        if not old:
            raise sub.error("from", "must not be empty")
        renames.append(Rename(old, sub.str("to")))
        sub.done()

    suffixes = t.str_map("suffixes", {})
    for old in suffixes:
        if not old.startswith("."):
            raise t.error(f"suffixes.{old}", "a suffix starts with '.', e.g. \".cu\" = \".hip\"")

    subs = []
    for sub in t.tables("substitute", []):
        old, new = sub.str("from"), sub.str("to")
        regex = sub.bool("regex", False)
        glob = sub.str("glob", "**")
        if regex:
            try:
                re.compile(old)
            except re.error as exc:
                raise sub.error("from", f"not a valid regular expression: {exc}") from None
        if not old:
            raise sub.error("from", "must not be empty")
        sub.done()
        subs.append(Substitution(old, new, regex, glob))
    t.done()
    return HipifySettings(
        engine=engine, launch_syntax=launch, dnn=dnn, strict=strict, include=include, overlay=overlay,
        exclude=tuple(excludes), renames=tuple(renames), suffixes=tuple(suffixes.items()),
        substitutions=tuple(subs), hipify_perl=perl, perl_warnings=perl_warnings, recipe=str(t.file),
    )
