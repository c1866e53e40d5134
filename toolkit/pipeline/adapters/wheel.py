"""The wheel stages: the built libraries packaged with scikit-build-core (wheel), then repaired by auditwheel
with every ROCm library left external (repair) into build/<recipe>/<variant>/wheelhouse."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from typing import TYPE_CHECKING

from toolkit.pipeline import derive
from toolkit.pipeline.build import Build
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, make_temp_dir, replace_dir
from toolkit.wheel.build import build_wheel
from toolkit.wheel.data import read_text
from toolkit.wheel.repair import repair_wheel

if TYPE_CHECKING:
    from toolkit.recipe.wheel import WheelSettings

TEMPLATES = ("CMakeLists.txt.in", "package_init.py", "package_main.py", "selfcheck.py")


def wheel_settings(b: Build) -> WheelSettings:
    settings = b.recipe.wheel
    if settings is None:  # the stage applies only where the recipe has one (_has_wheel)
        raise ToolkitError(f"recipe {b.recipe.name} has no [wheel] section ({b.recipe.file})")
    if b.options.local_version:
        settings = dataclasses.replace(settings, version=f"{settings.version}+{b.options.local_version}")
    # A named feature's build is a distribution of its own (the plan says so); the ROCm variant is added once the
    # libraries are built (build_wheel).
    return settings.for_features(b.enabled())


def templates_digest() -> str:
    digest = hashlib.sha256()
    for name in sorted(TEMPLATES):
        digest.update(name.encode() + b"\0" + read_text("templates", name).encode() + b"\0")
    return digest.hexdigest()


def wheel_stage(b: Build) -> Stage:
    settings = wheel_settings(b)
    ws = b.workspace

    def run() -> None:
        shutil.rmtree(ws.wheel_raw, ignore_errors=True)
        build_wheel(settings, ws.lib, derive.facts(b), ws.wheel_raw, env=b.env)

    # The templates are what the wheel's Python is made of (its self-check included): a change rebuilds the wheel.
    def inputs() -> JSON:
        return {"facts": derive.facts(b), "settings": repr(settings), "templates": templates_digest()}

    return Stage("wheel", inputs, [ws.wheel_raw], run,
                 lambda: [f"scikit-build-core wheel {settings.distribution} {settings.version} from {ws.lib} "
                          f"-> {ws.wheel_raw}"])


def repair_stage(b: Build) -> Stage:
    settings = wheel_settings(b)
    ws = b.workspace

    def run() -> None:
        wheels = sorted(ws.wheel_raw.glob("*.whl"))
        tmp = make_temp_dir(ws.root, "wheelhouse")
        try:
            repair_wheel(wheels[0], tmp, settings.excludes, settings.components,
                         [b.options.rocm_path] if b.options.rocm_path else [], env=b.env, platform=settings.platform)
            replace_dir(tmp, ws.wheelhouse)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    return Stage("repair", lambda: {}, [ws.wheelhouse], run,
                 lambda: [f"auditwheel repair (ROCm libraries excluded) -> {ws.wheelhouse}"])


def _has_wheel(b: Build) -> bool:
    return b.recipe.wheel is not None


WHEEL = StageSpec("wheel", "package lib/ as a py3-none wheel with scikit-build-core (--wheel)",
                  applies=_has_wheel, make=wheel_stage, packaging=True)
REPAIR = StageSpec("repair", "auditwheel repair, ROCm libraries left external, into wheelhouse/ (--wheel)",
                   applies=_has_wheel, make=repair_stage, packaging=True)
