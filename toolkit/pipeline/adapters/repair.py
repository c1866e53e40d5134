"""The repair stage: the wheel stage's wheel repaired into build/<recipe>/<variant>/wheelhouse, by auditwheel with
every ROCm library left external, or by delvewheel for a Windows build."""

from __future__ import annotations

import shutil

from toolkit.pipeline.adapters.wheel import has_wheel, wheel_settings
from toolkit.pipeline.build import Build
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util.fsutil import make_temp_dir, replace_dir
from toolkit.wheel.repair import repair_wheel
from toolkit.wheel.repair_windows import repair_windows_wheel


def repair_stage(b: Build) -> Stage:
    settings = wheel_settings(b)
    ws = b.workspace

    windows = b.toolchain().platform == "windows"

    def run() -> None:
        wheels = sorted(ws.wheel_raw.glob("*.whl"))
        tmp = make_temp_dir(ws.root, "wheelhouse")
        try:
            if windows:
                repair_windows_wheel(wheels[0], tmp, env=b.env, built=b.built_libraries(),
                                     provided=b.process_libraries())
            else:
                repair_wheel(wheels[0], tmp, settings.excludes, settings.components,
                             [b.options.rocm_path] if b.options.rocm_path else [], env=b.env,
                             platform=settings.platform)
            replace_dir(tmp, ws.wheelhouse)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    tool = ("delvewheel repair (what the DLLs import checked: Windows' own DLLs and the wheel's)" if windows else
            "auditwheel repair (ROCm libraries excluded)")
    return Stage("repair", lambda: {}, [ws.wheelhouse], run, lambda: [f"{tool} -> {ws.wheelhouse}"])



STAGE = StageSpec("repair", "auditwheel repair, ROCm libraries left external (delvewheel for a Windows build), into "
                   "wheelhouse/ (--wheel)",
                   applies=has_wheel, make=lambda b, produced: repair_stage(b), packaging=True)
