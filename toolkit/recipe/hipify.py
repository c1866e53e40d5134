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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Self, get_args

from toolkit.util.globs import glob_match
from toolkit.util.tomlfields import doc

if TYPE_CHECKING:  # a check is handed the site it names: `python -m toolkit hipify` starts without the TOML reader
    from toolkit.util.tomlread import Site

Engine = Literal["builtin", "hipify-perl"]
LaunchSyntax = Literal["chevron", "hipLaunchKernelGGL"]
DnnTarget = Literal["miopen", "hipdnn"]
ENGINES: tuple[str, ...] = get_args(Engine)
LAUNCH_SYNTAXES: tuple[str, ...] = get_args(LaunchSyntax)
DNN_TARGETS: tuple[str, ...] = get_args(DnnTarget)
DEFAULT_INCLUDE = (
    "**/*.cu", "**/*.cuh", "**/*.h", "**/*.hpp", "**/*.hh", "**/*.inl",
    "**/*.cc", "**/*.cpp", "**/*.cxx", "**/*.c",
)


def _says_why(reason: str, site: Site) -> None:
    if not reason.strip():
        raise site.error("must say why the files are excluded")


def _not_empty(text: str, site: Site) -> None:
    if not text:
        raise site.error("must not be empty")


def _a_suffix(new: str, site: Site) -> None:
    if not site.name.startswith("."):
        raise site.error("a suffix starts with '.', e.g. \".cu\" = \".hip\"")


def _beside_the_recipe(command: str, site: Site) -> str:
    """A relative path with a folder in it is relative to the recipe; a bare name is looked up on PATH."""
    if "/" in command and not Path(command).is_absolute():
        return str((site.context.folder / command).resolve())
    return command


@dataclass(frozen=True)
class Exclude:
    glob: str = field(metadata=doc("Glob of the files excluded."))
    reason: str = field(metadata=doc("Why (required, not empty).", check=_says_why))


@dataclass(frozen=True)
class Rename:
    """Replace `from_` by `to` inside every path component (directories and file names)."""
    from_: str = field(metadata=doc("Text replaced.", key="from", check=_not_empty))
    to: str = field(metadata=doc("Replacement."))


@dataclass(frozen=True)
class Substitution:
    from_: str = field(metadata=doc("Text (or regular expression) replaced.", key="from"))
    to: str = field(metadata=doc("Replacement."))
    regex: bool = field(default=False, metadata=doc("`from` is a regular expression."))
    glob: str = field(default="**", metadata=doc("Only in output files matching this glob."))
    engine: Engine | None = field(default=None, metadata=doc(
        "Only with this engine (`builtin` or `hipify-perl`): a fix-up of what the other engine converts itself. "
        "Default: with either."))

    def applies(self, engine: str) -> bool:
        return self.engine is None or self.engine == engine

    def validated(self, site: Site) -> Self:
        if self.regex:
            try:
                re.compile(self.from_)
            except re.error as exc:
                raise site.key("from").error(f"not a valid regular expression: {exc}") from None
        if not self.from_:
            raise site.key("from").error("must not be empty")
        return self


@dataclass(frozen=True)
class HipifySettings:
    engine: Engine = field(default="builtin", metadata=doc("`builtin` or `hipify-perl`; `--hipify-engine` overrides."))
    launch_syntax: LaunchSyntax = field(default="chevron", metadata=doc(
        "Kernel launches stay `<<<>>>` (`chevron`) or become `hipLaunchKernelGGL`."))
    dnn: DnnTarget = field(default="miopen", metadata=doc("cuDNN maps to `miopen` or `hipdnn`."))
    strict: bool = field(default=False, metadata=doc(
        "Fail the stage on any CUDA name no table maps, and on any `[[hipify.substitute]]` that matches nothing "
        "(otherwise a warning)."))
    include: tuple[str, ...] = field(default=DEFAULT_INCLUDE, metadata=doc(
        "Globs of the files converted: C/C++/CUDA sources. A CMake build file (`CMakeLists.txt`, `*.cmake`) they "
        "select is refused; exclude it or lay a hand-written one over the output (`overlay`)."))
    overlay: tuple[str, ...] = field(default=(), metadata=doc(
        "Globs of hand-written HIP files laid over the output unconverted."))
    exclude: tuple[Exclude, ...] = field(default=(), metadata=doc("Files left out, each with a reason."))
    renames: tuple[Rename, ...] = field(default=(), metadata=doc(
        "Substring renames applied to every path component.", key="rename"))
    suffixes: tuple[tuple[str, str], ...] = field(default=(), metadata=doc(
        "File suffix changes, `{ \".cu\" = \".hip\" }`.", each=_a_suffix))
    substitutions: tuple[Substitution, ...] = field(default=(), metadata=doc(
        "Text substitutions applied to the output after conversion, in order: written against the HIP text. One "
        "that matches no file warns, naming the likely reason.", key="substitute"))
    hipify_perl: str = field(default="hipify-perl", metadata=doc(
        "The hipify-perl executable (a relative path with `/` is relative to the recipe).",
        convert=_beside_the_recipe))
    perl_warnings: bool = field(default=True, metadata=doc(
        "hipify-perl's per-line warnings; `false` runs it with `-quiet-warnings` (the same output, most of its "
        "time saved)."))
    # When set, an input whose output path matches `unit_globs` (a translation unit) is converted only if
    # that path is listed: a sample's compile check needs its units and every header, not the whole tree.
    only_units: tuple[str, ...] = ()
    unit_globs: tuple[str, ...] = ()
    recipe: str = ""  # the recipe file the settings come from, for messages ('' on the command line)

    def validated(self, site: Site) -> Self:
        return replace(self, recipe=str(site.file))

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

