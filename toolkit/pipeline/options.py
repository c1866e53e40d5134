"""Build options as one typed value, declared once.

Each field of BuildOptions carries its command-line declaration (flags, help, metavar, how its value is parsed
and written back, whether a release passes it on to each entry's build). The argparse options of every command
that takes build options, the value parsed from them (options_from_args), the command line that gives the same
value again (build_argv) and the release's pass-through (RELEASE_PASSED, release_overrides) are all made from
it, so adding an option is one field here.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from toolkit.recipe.core import TOOLCHAIN_PLATFORMS, TOOLCHAINS, floor_problem
from toolkit.recipe.hipify import ENGINES as HIPIFY_ENGINES
from toolkit.recipe.hipify import Engine as HipifyEngine
from toolkit.recipe.load import DEFAULT_RECIPE
from toolkit.util.errors import ToolkitError

# A variant is one folder under build/<recipe>/: a plain name, never a path that could leave it.
_VARIANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_KEY = "option"

# How an option's value is spelled on a command line:
#   value     --flag VALUE             (argparse `type` parses it)
#   switch    --flag                   (on or off)
#   repeated  --flag A --flag B        (a tuple, in order)
#   feature   --flag-A --flag-B        (a tuple; `--flag A` is read too)
#   csv       --flag A,B               (a tuple)
Kind = Literal["value", "switch", "repeated", "feature", "csv"]


@dataclass(frozen=True)
class Flag:
    """One build option's command-line declaration."""

    flags: tuple[str, ...]   # as argparse takes them; the last is the spelling build_argv writes
    help: str
    kind: Kind = "value"
    metavar: str | None = None
    type: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    # `release` takes it and passes it on to each entry's build (here, or in a container of the entry's root).
    release: bool = False
    # Written back even at its default: a recorded command names the recipe and the variant it built.
    always: bool = False

    @property
    def spelling(self) -> str:
        return self.flags[-1]


def _option(*flags: str, help: str, default: Any = dataclasses.MISSING,
            default_factory: Any = dataclasses.MISSING, **declared: Any) -> Any:
    """A BuildOptions field with its command-line declaration (typed as the field it initializes)."""
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata={_KEY: Flag(flags, help, **declared)})


def positive_int(value: str) -> int:
    """argparse type for --jobs: a whole number >= 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def _glibc_floor(text: str) -> str:
    problem = floor_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


@dataclass(frozen=True)
class BuildOptions:
    # In the order `build --help` lists them.
    recipe: str = _option("--recipe", default=DEFAULT_RECIPE, metavar="NAME|PATH", always=True,
                          help="recipe name (recipes/NAME.toml) or path")
    variant: str = _option("--variant", default="release", metavar="NAME", always=True,
                           help="work tree name under build/<recipe>/")
    with_features: tuple[str, ...] = _option("--with", default=(), kind="feature", metavar="FEATURE",
                                             help="turn a feature on (also spelled --with-FEATURE)")
    without_features: tuple[str, ...] = _option("--without", default=(), kind="feature", metavar="FEATURE",
                                                help="turn a feature off (also spelled --without-FEATURE)")
    jobs: int = _option("-j", "--jobs", default_factory=lambda: os.cpu_count() or 2, type=positive_int,
                        metavar="N", release=True, help="parallel build jobs, at least 1 (default: all cores)")
    dry_run: bool = _option("--dry-run", default=False, kind="switch", help="print the plan; create nothing")
    force: bool = _option("--force", default=False, kind="switch",
                          help="run every stage even if its inputs are unchanged")
    # Fail at once instead of waiting when another process holds the work tree's lock.
    no_wait: bool = _option("--no-wait", default=False, kind="switch",
                            help="fail at once when another process is building in the same work tree "
                                 "(default: wait)")
    source: str | None = _option("--source", default=None, metavar="PATH|URL#sha256=HEX|git+URL@COMMIT",
                                 release=True, help="build this tree instead of the recipe's: PATH, "
                                                    "URL#sha256=HEX or git+URL@COMMIT")
    build_folder: Path | None = _option("--build-dir", default=None, type=Path, metavar="DIR", release=True,
                                      help="build folder (default: $TOOLKIT_BUILD_DIR or ./build)")
    gpu_targets: tuple[str, ...] = _option("--gpu-targets", default=(), kind="csv", metavar="TARGETS",
                                           help="comma-separated AMD GPU targets, e.g. gfx90a,gfx1030")
    offline: bool = _option("--offline", default=False, kind="switch", release=True,
                            help="use the download cache and file:// mirrors only; never the network")
    mirrors: tuple[str, ...] = _option("--mirror", default=(), kind="repeated", metavar="BASE", release=True,
                                       help="artifact server tried before upstream (BASE/<host>/<path>); "
                                            "also $TOOLKIT_MIRRORS")
    # Applied where the sources are fetched (toolkit.sources.mirrors.may_serve), never through the environment.
    insecure_mirror: bool = _option("--insecure-mirror", default=False, kind="switch", release=True,
                                    help="let a plain http:// mirror serve https:// URLs (skipped otherwise: an "
                                         "unauthenticated channel could change what gets pinned); also "
                                         "$TOOLKIT_INSECURE_MIRROR=1")
    # On in every build of a release (release/entry.py): checked before anything is fetched (validate.check_pinned),
    # and FetchContext.release refuses an unpinned URL wherever it is fetched.
    require_pinned: bool = _option("--require-pinned", default=False, kind="switch",
                                   help="refuse the build, before anything is fetched, when an archive it fetches "
                                        "(source, FetchContent dependency, ORT package) has no sha256 or content "
                                        "digest in the recipe or its lock file (a release's builds always do)")
    ort_home: Path | None = _option("--ort-home", default=None, type=Path, metavar="DIR",
                                    help="an existing ONNX Runtime install (headers, lib, CMake config)")
    rocm_path: Path | None = _option("--rocm-path", default=None, type=Path, metavar="DIR",
                                     help="ROCm install (default: $ROCM_PATH, /opt/rocm)")
    migraphx_home: Path | None = _option("--migraphx-home", default=None, type=Path, metavar="DIR",
                                         help="MIGraphX install (default: inside ROCm)")
    # A local version label for the wheel (release matrix entries must not share a wheel name).
    local_version: str | None = _option("--local-version", default=None, metavar="LABEL",
                                        help="local version label of the wheel (VERSION+LABEL), as release "
                                             "entries use")
    # The C/C++ toolchain instead of the recipe's [build] toolchain (system, zig, mingw).
    toolchain: str | None = _option("--toolchain", default=None, choices=TOOLCHAINS,
                                    help="C/C++ toolchain instead of the recipe's [build] toolchain: system "
                                         "(CMake's pick), zig (pinned ziglang, for the recipe's glibc floor, "
                                         "libc++ linked in statically) or mingw (Windows DLLs for a win_amd64 "
                                         "wheel, in the debian-sid-windows build root)")
    # The glibc floor the zig toolchain builds for, instead of the recipe's [build] glibc_floor.
    glibc_floor: str | None = _option("--glibc-floor", default=None, metavar="2.N", type=_glibc_floor,
                                      help="with the zig toolchain: build for this glibc instead of the recipe's "
                                           "[build] glibc_floor")
    # The hipify engine instead of the recipe's [hipify] engine (builtin, hipify-perl); `build` alone takes it.
    hipify_engine: HipifyEngine | None = _option("--hipify-engine", default=None, choices=HIPIFY_ENGINES,
                                        help="hipify with this engine instead of the recipe's [hipify] engine")

    def target_platform(self, recipe_toolchain: str) -> str:
        """The operating system the build is for: its toolchain's (--toolchain, else the recipe's [build] one)."""
        return TOOLCHAIN_PLATFORMS[self.toolchain or recipe_toolchain]

    def __post_init__(self) -> None:
        check_work_tree_name(self.variant)
        if self.jobs < 1:
            raise ToolkitError(f"--jobs {self.jobs}: must be at least 1", hint="leave it out to use every core")


def check_work_tree_name(variant: str) -> str:
    if not _VARIANT.fullmatch(variant):
        raise ToolkitError(f"--variant {variant!r}: a variant is a plain folder name under build/<recipe>/",
                           hint="use letters, digits, '.', '_', '+' or '-', starting with a letter or digit "
                                "(no '/', no '..')")
    return variant


# -- what is made from the declaration ------------------------------------------------------------------

DECLARED: dict[str, Flag] = {f.name: f.metadata[_KEY] for f in fields(BuildOptions)}
# A value option's default as its help shows it (none where it is computed: --jobs).
_SHOWN_DEFAULT = {f.name: None if f.default is dataclasses.MISSING else f.default for f in fields(BuildOptions)}
# Every command that runs the pipeline takes these; `build` adds the rest (BUILD_ONLY) among its own options.
BUILD_ONLY = ("hipify_engine",)
SHARED = tuple(name for name in DECLARED if name not in BUILD_ONLY)
# What `release` takes and passes on to each entry's build.
RELEASE_PASSED = tuple(name for name, flag in DECLARED.items() if flag.release)

Parser = argparse.ArgumentParser | argparse._ArgumentGroup


def add_option(p: Parser, name: str, **changes: Any) -> argparse.Action:
    """Add the declared option `name` (a BuildOptions field) to `p`; `changes` are argparse keywords that suit
    one command (its own help, required, a default of None)."""
    flag = DECLARED[name]
    kwargs: dict[str, Any] = {"dest": name, "help": flag.help}
    if flag.kind == "switch":
        kwargs.update(action="store_true", default=False)
    elif flag.kind in ("repeated", "feature"):
        kwargs.update(action="append", default=[], metavar=flag.metavar)
    else:
        # None stands for "not given": options_from_args leaves the field at its default.
        shown = _SHOWN_DEFAULT[name] if flag.kind == "value" else None
        kwargs.update(default=shown, metavar=flag.metavar, type=flag.type, choices=flag.choices)
    kwargs.update(changes)
    return p.add_argument(*flag.flags, **{k: v for k, v in kwargs.items() if v is not None or k == "default"})


def add_options(p: Parser, names: Iterable[str]) -> None:
    for name in names:
        add_option(p, name)


def add_build_arguments(p: Parser) -> None:
    """Arguments shared by every command that runs the build pipeline (build, patch, survey, compile-check)."""
    add_options(p, SHARED)


def _parsed(flag: Flag, given: Any) -> Any:
    if flag.kind in ("repeated", "feature"):
        return tuple(given)
    if flag.kind == "csv":
        return tuple(t for t in given.split(",") if t)
    return given


def options_from_args(args: argparse.Namespace, names: Iterable[str] | None = None) -> BuildOptions:
    """The options a command line gave (only `names`, when given); those it did not give keep their default."""
    chosen = DECLARED if names is None else {name: DECLARED[name] for name in names}
    given = {name: getattr(args, name, None) for name in chosen}
    return BuildOptions(**{name: _parsed(chosen[name], value) for name, value in given.items()
                           if value is not None})


_DEFAULTS = BuildOptions()


def _default(name: str) -> Any:
    return getattr(_DEFAULTS, name)


def spell(name: str, value: Any) -> list[str]:
    """`value` of option `name` as a command line writes it."""
    flag = DECLARED[name]
    if flag.kind == "switch":
        return [flag.spelling] if value else []
    if flag.kind == "repeated":
        return [part for item in value for part in (flag.spelling, str(item))]
    if flag.kind == "feature":
        return [f"{flag.spelling}-{item}" for item in value]
    if flag.kind == "csv":
        return [flag.spelling, ",".join(value)] if value else []
    return [] if value is None else [flag.spelling, str(value)]


def option_argv(options: BuildOptions, names: Iterable[str] | None = None) -> list[str]:
    """The command-line options that give `options` again (only `names`, when given): each one that differs
    from its default, in declaration order."""
    chosen = set(DECLARED if names is None else names)
    argv: list[str] = []
    for name, flag in DECLARED.items():
        value = getattr(options, name)
        if name in chosen and (flag.always or value != _default(name)):
            argv += spell(name, value)
    return argv


def build_argv(options: BuildOptions, *extra: str) -> list[str]:
    """The `python -m toolkit build` command line that settles `options` (what a release records it ran)."""
    return ["python", "-m", "toolkit", "build", *option_argv(options), *extra]


def release_overrides(options: BuildOptions) -> dict[str, Any]:
    """The options a release was given to pass on (RELEASE_PASSED), as field values to set on an entry's own
    options: those left at their default are not passed."""
    return {name: getattr(options, name) for name in RELEASE_PASSED if getattr(options, name) != _default(name)}
