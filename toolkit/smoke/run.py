"""Smoke-test EP wheels as a user gets them: a fresh venv, pip install, then smoke_check.py inside it.

The checker runs with the venv's python from a copy beside the venv, so nothing of the toolkit (or
this source tree) is importable there: a passing smoke means the installed wheel works on its own.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from toolkit.recipe.smoke import SmokeSettings
from toolkit.smoke.inside.smoke_check import PLACEHOLDER
from toolkit.smoke.selfcheck import check_range, resolve_env, resolve_value, run_selfcheck
from toolkit.smoke.venvs import clean_env, create_venv, pip_install
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run

CHECKER = Path(__file__).parent / "inside" / "smoke_check.py"
GENAI_CHECKER = Path(__file__).parent / "inside" / "smoke_genai.py"
# What the checker itself imports, besides the wheels under test and their own requirements.
CHECKER_REQUIREMENTS = ("onnxruntime", "onnx", "numpy")


def import_packages(wheel: Path) -> list[str]:
    """Top-level import packages of a wheel that look like EP packages (they carry get_library_path)."""
    found = []
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            parts = name.split("/")
            if len(parts) == 2 and parts[1] == "__init__.py" and not parts[0].endswith((".dist-info", ".data")):
                if b"def get_library_path" in archive.read(name):
                    found.append(parts[0])
    if not found:
        raise ToolkitError(f"{wheel}: no top-level package defines get_library_path(); not an EP wheel")
    return found


def checker_command(
    python: Path, checker: Path, packages: list[str], settings: SmokeSettings, env: Mapping[str, str], require_gpu: bool
) -> list[str]:
    # Every value glued to its option (--name=value): a recipe's pattern or value never reads as an option.
    cmd = [str(python), "-I", str(checker)]
    cmd += [f"--package={package}" for package in packages]
    cmd += [f"--env={name}={value}" for name, value in env.items()]
    cmd += [f"--expect-log={pattern}" for pattern in settings.expect_log]
    cmd += ["--atol", repr(settings.atol), "--rtol", repr(settings.rtol)]
    for flag, mapping in (("--provider-option", settings.provider_options),
                          ("--session-config", settings.session_config),
                          ("--wrong-provider-option", settings.wrong_provider_options)):
        cmd += [f"{flag}={key}={value}" for key, value in mapping.items()]
    if settings.wrong_error is not None:
        cmd += [f"--wrong-error={settings.wrong_error}"]
    if require_gpu:
        cmd.append("--require-gpu")
    return cmd


def run_smoke(
    wheel_paths: Iterable[Path],
    settings: SmokeSettings,
    *,
    require_gpu: bool = False,
    env: Mapping[str, str] | None = None,
    find_links: Iterable[Path] = (),
    no_index: bool = False,
    inherit_site_packages: bool = False,
    work_dir: Path | None = None,
) -> int:
    """Install the wheels in a fresh venv and run the checker there; returns its exit status.

    `env` adds to (and overrides) the recipe's [smoke] env. `inherit_site_packages` lets the venv see
    this interpreter's onnxruntime and onnx, for machines without a package index (see create_venv);
    the wheels under test are still installed into the fresh venv. `work_dir` keeps the venv.
    """
    wheels = [Path(w).resolve() for w in wheel_paths]
    if not wheels:
        raise ToolkitError("smoke: no wheel given")
    for wheel in wheels:
        if not wheel.is_file():
            raise ToolkitError(f"{wheel}: wheel not found", "run the wheel and repair stages first")
    packages = [p for wheel in wheels for p in import_packages(wheel)]
    merged_env = {**settings.env, **(env or {})}
    with tempfile.TemporaryDirectory(prefix="smoke-") as tmp:
        base = Path(work_dir) if work_dir else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        log.stage("smoke", f"fresh venv in {base / 'venv'}")
        python = create_venv(base / "venv", inherit_site_packages)
        pip_install(python, [*map(str, wheels), *CHECKER_REQUIREMENTS, *settings.packages], find_links, no_index)
        checker = base / "smoke_check.py"
        shutil.copyfile(CHECKER, checker)
        resolved_env = resolve_env(python, checker, merged_env, clean_env())
        # The wheel's own self-check first: what it says (exit and verdict) the checker holds ORT's outcome to.
        verdict = run_selfcheck(python, packages[0], {**clean_env(), **resolved_env}, base)
        cmd = checker_command(python, checker, packages, settings, merged_env, require_gpu)
        cmd += [f"--selfcheck-exit={verdict.code}", f"--selfcheck-verdict={verdict.verdict}"]
        log.stage("smoke", f"checking {', '.join(packages)}" + (" (GPU required)" if require_gpu else ""))
        # The checker's own stdout and stderr go straight to ours: the PASS/FAIL lines are the report.
        result = run(cmd, output="terminal", check=False, cwd=base, env=clean_env())
        sys.stdout.flush()
        returncode = result.returncode
        if settings.genai:
            genai = base / GENAI_CHECKER.name
            shutil.copyfile(GENAI_CHECKER, genai)
            log.stage("smoke", "onnxruntime-genai's amdgpu provider against the CPU provider")
            library = resolve_value(python, checker, f"{{library:{packages[0]}}}", f"the library of {packages[0]}",
                                    clean_env())
            cmd = [str(python), "-I", str(genai), f"--library={library}",
                   *[f"--env={name}={value}" for name, value in resolved_env.items()]]
            result = run(cmd + (["--require-gpu"] if require_gpu else []), output="terminal", check=False, cwd=base,
                         env=clean_env())
            sys.stdout.flush()
            returncode = returncode or result.returncode
        if settings.onnxruntime_range and no_index:
            print("SKIP onnxruntime range: --no-index (it installs onnxruntime releases from the package index)")
        elif settings.onnxruntime_range:
            # Only the wheel and onnxruntime there, as a user installs them: no value pointing into the smoke venv.
            plain = {k: v for k, v in merged_env.items() if not PLACEHOLDER.search(v)}
            returncode = check_range(wheels, packages[0], find_links, {**clean_env(), **plain}, base,
                                     clean_env()) or returncode
    if returncode != 0:
        log.stage("smoke", f"FAILED (exit {returncode})")
    return returncode
