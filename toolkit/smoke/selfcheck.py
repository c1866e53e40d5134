"""The wheel's own self-check (`python -m <package>`, templates/selfcheck.py) run by the smoke test, and the
supported onnxruntime range tested: the wheel beside PyPI's onnxruntime at the lowest and the newest version its
range allows (the `onnxruntime` its _wheel_info.json records: the wheel declares no dependency on an ONNX Runtime),
each in a fresh venv, the self-check saying whether ORT registers the EP there."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from toolkit.smoke.inside.smoke_check import PLACEHOLDER
from toolkit.smoke.venvs import create_venv, pip_install
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.util.process import run
from toolkit.wheel.project import INFO_FILE
from toolkit.wheel.wheelfile import read_headers


@dataclass(frozen=True)
class SelfCheck:
    code: int
    verdict: str  # its last line: "ready: ..." or "not ready: ..."
    output: str


# The checker's resolver, run by the venv's python; the checker's path and the value come in as arguments.
_RESOLVE = "import runpy, sys; print(runpy.run_path(sys.argv[1])['resolve_placeholders'](sys.argv[2]))"


def resolve_value(python: Path, checker: Path, value: str, what: str, clean_env: dict[str, str]) -> str:
    """`value` with each `{library:MODULE}` replaced by MODULE.get_library_path() as the venv's python says,
    through the checker's own resolver (smoke_check.resolve_placeholders)."""
    if PLACEHOLDER.search(value) is None:
        return value
    done = run([str(python), "-I", "-c", _RESOLVE, str(checker), value], what, env=clean_env)
    return done.stdout.removesuffix("\n")


def resolve_env(python: Path, checker: Path, env: Mapping[str, str], clean_env: dict[str, str]) -> dict[str, str]:
    """The smoke env with its `{library:MODULE}` resolved in the venv."""
    return {name: resolve_value(python, checker, value, f"smoke env {name}: {value}", clean_env)
            for name, value in env.items()}


def run_selfcheck(python: Path, package: str, env: dict[str, str], cwd: Path, json_out: bool = False) -> SelfCheck:
    """`python -I -m PACKAGE` in the venv; prints its report (unless json_out) and returns its exit and verdict."""
    cmd = [str(python), "-I", "-m", package, *(["--json"] if json_out else [])]
    done = run(cmd, f"self-check of {package}", check=False, cwd=cwd, env=env)
    output = done.stdout
    if not json_out:
        print("---- self-check: python -m " + package + " ----\n" + output.rstrip("\n") + "\n----", flush=True)
    lines = [line for line in output.splitlines() if line.strip()]
    return SelfCheck(done.returncode, lines[-1] if lines else "(no output)", output)


def wheel_ort_requirement(wheel: Path) -> Requirement | None:
    """The onnxruntime range the wheel supports: its package's _wheel_info.json (a wheel this toolkit made), else a
    `Requires-Dist: onnxruntime...` of its METADATA (another project's plugin EP wheel); None when neither says."""
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            parts = name.split("/")
            if len(parts) == 2 and parts[1] == INFO_FILE:
                spec = json.loads(archive.read(name)).get("onnxruntime")
                if spec:
                    return Requirement(f"onnxruntime{spec}")
        metadata = read_headers(archive, "METADATA")
    for line in (metadata.get_all("Requires-Dist") or []) if metadata else []:
        requirement = Requirement(line)
        if requirement.name == "onnxruntime" and requirement.marker is None:
            return requirement
    return None


def available_versions(python: Path, clean_env: dict[str, str]) -> list[Version]:
    """onnxruntime's versions the package index has for the venv's Python (`pip index versions`)."""
    cmd = [sys.executable, "-m", "pip", "--python", str(python), "index", "versions", "onnxruntime",
           "--disable-pip-version-check"]
    done = run(cmd, "pip index versions onnxruntime", check=False, env=clean_env)
    match = re.search(r"Available versions:\s*(.+)", done.stdout)
    if done.returncode != 0 or match is None:
        raise ToolkitError("smoke: cannot list onnxruntime's versions on the package index "
                           f"(pip index versions onnxruntime exited {done.returncode})",
                           hint="onnxruntime_range needs a package index; on a machine without one, run the smoke "
                                "without it (it is skipped with --no-index)")
    versions = []
    for text in match.group(1).split(","):
        try:
            versions.append(Version(text.strip()))
        except InvalidVersion:
            continue
    return versions


def range_ends(requirement: Requirement, versions: Iterable[Version]) -> list[Version]:
    """The lowest and the newest final release the requirement allows (one version when they are the same)."""
    allowed = sorted(v for v in versions if not v.is_prerelease and v in requirement.specifier)
    if not allowed:
        raise ToolkitError(f"smoke: no onnxruntime release on the package index satisfies {requirement}")
    return sorted({allowed[0], allowed[-1]})


def judge(version: Version, facts: JSON) -> tuple[str, str]:
    """PASS/INFO/FAIL and why, for the self-check's facts beside onnxruntime `version`."""
    registration = facts["registration"]
    if facts["onnxruntime"]["version"] != str(version):
        return "FAIL", f"the venv has onnxruntime {facts['onnxruntime']['version']}, not {version}"
    if not registration["error"]:
        return "PASS", (f"onnxruntime {version}: {facts['ep_name']} registers, {len(registration['devices'])} "
                        f"device(s); self-check: {facts['missing'] or 'ready'}")
    missing = facts["missing"] or ""
    if missing.startswith("needs ROCm"):
        return "INFO", (f"onnxruntime {version}: installs beside the wheel; ORT cannot load the EP here, as the "
                        f"self-check says: {missing}")
    return "FAIL", f"onnxruntime {version}: registering fails: {registration['error']}"


def check_range(wheels: list[Path], package: str, find_links: Iterable[Path], env: dict[str, str], base: Path,
                clean_env: dict[str, str]) -> int:
    """The wheel beside the lowest and the newest onnxruntime its range allows, each in a fresh venv; 1 on FAIL."""
    requirement = wheel_ort_requirement(wheels[0])
    if requirement is None:
        print(f"FAIL onnxruntime range: {wheels[0].name} names no onnxruntime range", flush=True)
        return 1
    failures = 0
    probe = create_venv(base / "venv-range-probe", False)
    for version in range_ends(requirement, available_versions(probe, clean_env)):
        log.stage("smoke", f"onnxruntime {version} (of {requirement.specifier}) beside the wheel, fresh venv")
        python = create_venv(base / f"venv-ort-{version}", False)
        pip_install(python, [*map(str, wheels), f"onnxruntime=={version}"], find_links, False)
        result = run_selfcheck(python, package, env, base, json_out=True)
        try:
            facts = json.loads(result.output)
        except ValueError:
            print(f"FAIL onnxruntime {version}: the self-check printed no facts (exit {result.code}): "
                  f"{result.verdict}", flush=True)
            failures += 1
            continue
        status, words = judge(version, facts)
        failures += status == "FAIL"
        print(f"{status} {words}", flush=True)
    print(f"ONNXRUNTIME RANGE {'FAIL' if failures else 'PASS'}: {requirement}", flush=True)
    return 1 if failures else 0
