"""`python -m toolkit wheel|repair|inspect|smoke`: the wheel stage's commands without Nox.

Imports of the stage modules happen inside each command, so `smoke` and `inspect` need no build tools: a GPU
machine with no index runs them with the packages the command line itself imports (pyelftools, packaging,
platformdirs, requests; CONTRIBUTING.md's GPU test machine).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.recipe.load import load_recipe, recipe_argument
from toolkit.util.argcheck import name_value_pairs
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON

if TYPE_CHECKING:  # imported inside each command, as the stage modules are
    from toolkit.recipe.smoke import SmokeSettings
    from toolkit.recipe.wheel import Component, WheelSettings


def recipe_wheel_settings(recipe: Path) -> WheelSettings:
    """The [wheel] section of a recipe file (what `wheel`, `repair`, `meta-wheel` and a release read), the recipe
    read whole (load_recipe), as every command reads it."""
    wheel = load_recipe(recipe).wheel
    if wheel is None:
        raise ToolkitError(f"{recipe}: no [wheel] section", "add [wheel] to the recipe")
    return wheel


def _smoke_settings(recipe: Path | None) -> SmokeSettings:
    from toolkit.recipe.smoke import SmokeSettings

    if recipe is None:
        return SmokeSettings()
    return load_recipe(recipe).smoke or SmokeSettings()


def cmd_meta_wheel(args: argparse.Namespace) -> int:
    from toolkit.wheel.meta import write_meta_wheel

    print(write_meta_wheel(recipe_wheel_settings(args.recipe), args.out))
    return 0


def cmd_wheel(args: argparse.Namespace) -> int:
    from toolkit.wheel.build import build_wheel
    from toolkit.wheel.buildinfo import BuildInfo

    settings = recipe_wheel_settings(args.recipe)
    data: JSON = {}
    if args.build_info:
        try:
            data = json.loads(Path(args.build_info).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ToolkitError(f"{args.build_info}: cannot read build info JSON: {exc}") from None
    if args.source_revision:
        data["source_revision"] = args.source_revision
    if args.feature:
        data["features"] = sorted(set(data.get("features", [])) | set(args.feature))
    data.setdefault("source_revision", "unknown")
    info = BuildInfo.from_mapping(data, where=str(args.build_info or "build info"))
    print(build_wheel(settings, args.lib_dir, info, args.out))
    return 0


def cmd_repair(args: argparse.Namespace) -> int:
    from toolkit.wheel.repair import repair_wheel

    extra: list[str] = list(args.exclude)
    components: tuple[Component, ...] = ()
    platform = "manylinux"
    if args.recipe:
        settings = recipe_wheel_settings(args.recipe)
        extra += list(settings.excludes)
        components, platform = settings.components, settings.platform
    result = repair_wheel(args.wheel, args.out or args.wheel.parent / "repaired", extra, components, args.rocm_path,
                          platform=platform)
    print(result.wheel)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from toolkit.wheel.inspection import format_report, inspect_wheel

    report = inspect_wheel(args.wheel)
    print(report.to_json() if args.json else format_report(report))
    return 0


def cmd_smoke(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from toolkit.smoke.run import run_smoke

    settings = _smoke_settings(args.recipe)
    if args.package:
        settings = replace(settings, packages=(*settings.packages, *args.package))
    return run_smoke(
        args.wheels,
        settings,
        require_gpu=args.require_gpu,
        env=name_value_pairs(args.env, "--env"),
        find_links=args.find_links,
        no_index=args.no_index,
        inherit_site_packages=args.inherit_site_packages,
        work_dir=args.keep,
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("wheel", help="package built EP libraries as a wheel (scikit-build-core)")
    p.add_argument("--recipe", type=recipe_argument, required=True, help="recipe TOML with a [wheel] section")
    p.add_argument("--lib-dir", type=Path, required=True, help="folder of the built libraries")
    p.add_argument("--out", type=Path, required=True, help="folder to write the wheel to")
    p.add_argument("--build-info", type=Path,
                   help="JSON: source_revision, patches, features, rocm_version, gpu_targets")
    p.add_argument("--source-revision", help="overrides the build info's source_revision")
    p.add_argument("--feature", action="append", default=[], help="a feature that was on (repeatable)")
    p.set_defaults(func=cmd_wheel)

    p = sub.add_parser("meta-wheel", help="the meta-package of a recipe with [wheel.rocm_variants]: it installs the "
                                          "newest ROCm major's variant")
    p.add_argument("--recipe", type=recipe_argument, required=True, help="recipe TOML with [wheel.rocm_variants]")
    p.add_argument("--out", type=Path, required=True, help="folder to write the wheel to")
    p.set_defaults(func=cmd_meta_wheel)

    p = sub.add_parser("repair", help="auditwheel repair with the ROCm excludes, then ELF checks")
    p.add_argument("wheel", type=Path, help="the wheel to repair")
    p.add_argument("--out", type=Path, help="folder for the repaired wheel (default: WHEEL's folder/repaired)")
    p.add_argument("--exclude", action="append", default=[], help="another soname pattern not to bundle")
    p.add_argument("--recipe", type=recipe_argument, help="recipe whose [wheel] excludes, runpaths and loads apply")
    p.add_argument("--rocm-path", action="append", type=Path, default=[],
                   help="a ROCm install besides /opt/rocm* and $ROCM_PATH (repeatable)")
    p.set_defaults(func=cmd_repair)

    p = sub.add_parser("inspect", help="tags, libraries, unmet needs, EP entry points, GPU targets of a wheel")
    p.add_argument("wheel", type=Path, help="any wheel file, ours or built elsewhere")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("smoke", help="install wheels in a fresh venv and check they register with ORT")
    p.add_argument("wheels", type=Path, nargs="+", metavar="WHEEL", help="the wheels to install and test")
    p.add_argument("--recipe", type=recipe_argument, help="recipe with a [smoke] section")
    p.add_argument("--require-gpu", action="store_true", help="no GPU device from our EP is a failure")
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the check; {library:MODULE} allowed")
    p.add_argument("--package", action="append", default=[], help="another requirement to install in the venv")
    p.add_argument("--find-links", action="append", type=Path, default=[], help="folder of wheels for pip")
    p.add_argument("--no-index", action="store_true", help="install from --find-links only")
    p.add_argument("--inherit-site-packages", action="store_true",
                   help="let the venv see this interpreter's packages (onnxruntime, onnx) on offline machines")
    p.add_argument("--keep", type=Path, help="build the venv here and keep it")
    p.set_defaults(func=cmd_smoke)
