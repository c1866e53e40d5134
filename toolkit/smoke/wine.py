"""Smoke-test a win_amd64 EP wheel under Wine: no Windows machine can be had here, so a small C harness on ONNX
Runtime's C API (wine/harness.c, compiled with the MinGW toolchain) loads PyPI's own Windows onnxruntime.dll,
registers the wheel's EP DLL and walks the steps, once per ONNX Runtime in data/windows.toml:

  1. register:  the registration succeeds, with the devices the factory offers (or none);
  2. device:    one of them is a GPU (Wine's DXCore/D3D12 over vkd3d and Mesa's lavapipe, under Xvfb);
  3. session:   MatMul+Relu on that device with CPU fallback off, compared with ORT's CPU EP;
  4. selfcheck: the wheel's own `python -m <package>` in Windows CPython, beside that runtime's onnxruntime
     package, as a Windows user runs it: it must find the EP ready (its DLLs loaded as ORT loads them, each DLL
     the wheel carries bound to the wheel's copy, the EP registered through Python with a device).

A step Wine cannot carry ends the run there, named with the first message Wine's debug channels (err, fixme)
printed. The wheel is unpacked as pip would install it (its files under one site folder), the recipe's [smoke]
env is set, with {library:MODULE} resolved to that module's Windows DLL, and its expect_log lines must appear."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from toolkit.cmake.mingw import MingwPin
from toolkit.recipe.smoke import SmokeSettings
from toolkit.smoke.decoys import carried_dlls, decoys_loaded, make_decoys
from toolkit.smoke.inside.smoke_check import PLACEHOLDER
from toolkit.smoke.onnx_model import matmul_relu_model
from toolkit.smoke.wine_inputs import (
    harness,
    libraries,
    python_folder,
    runtimes,
    unpacked,
    windows_python,
    wine_env,
    wine_prefix,
)
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run

MODEL_SHAPE = (2, 3)
STEPS = ("register", "device", "session")
# Wine's debug channels (`0024:fixme:dxcore:DXCoreCreateAdapterFactory ... stub!`, and vkd3d's own
# `vkd3d:0024:fixme:d3d12_device_CreateSharedHandle ... stub!`): the class, and the call it names.
_WINE_MESSAGE = re.compile(r"^(?:vkd3d:)?[0-9a-f]{4}:(err|fixme|warn):(?:\w+:(?=\w+[ (]))?(\w+)")
_BEGIN = re.compile(r"^\[harness\] begin (\w+)$")


def windows_path(path: Path) -> str:
    """The path Wine's programs see for a host path: drive Z: is the host's root."""
    return "Z:" + str(PurePosixPath(path)).replace("/", "\\")


@dataclass
class Run:
    """One harness run: its step lines, its devices, the EP's log and Wine's own messages."""

    runtime: str
    version: str = ""
    steps: dict[str, tuple[str, str]] = field(default_factory=dict)  # step -> (PASS|FAIL|SKIP, text)
    devices: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    wine: dict[str, list[str]] = field(default_factory=dict)  # step -> Wine's messages while it ran
    begun: list[str] = field(default_factory=list)  # the steps the harness began, in order
    returncode: int = 0

    @classmethod
    def parse(cls, runtime: str, stdout: str, stderr: str, returncode: int) -> Run:
        out = cls(runtime, returncode=returncode)
        for line in stdout.replace("\r", "").splitlines():
            verdict, _, rest = line.partition(" ")
            step, _, text = rest.partition(": ")
            if line.startswith("ORT "):
                out.version = line.split()[1]
            elif line.startswith("DEVICE "):
                out.devices.append(line[len("DEVICE "):])
            elif verdict in ("PASS", "FAIL", "SKIP") and step in (*STEPS, "unregister"):
                out.steps[step] = (verdict, text)
        step = "start"
        for line in stderr.replace("\r", "").splitlines():
            begin = _BEGIN.match(line)
            if begin:
                step = begin.group(1)
                out.begun.append(step)
            elif _WINE_MESSAGE.match(line):
                out.wine.setdefault(step, []).append(line)
            else:
                out.log.append(line)
        return out

    def wine_wall(self, step: str) -> str | None:
        """The call Wine could not carry in `step`: the last unimplemented one it named (a stub), else its last
        error; None when it said neither (then the EP, not Wine, stopped the step)."""
        messages = self.wine.get(step, [])
        stubs = [m for m in messages if "stub" in m]
        errors = [m for m in messages if _kind(m) == "err"]
        if not stubs and not errors:
            return None
        chosen = (stubs or errors)[-1]
        match = _WINE_MESSAGE.match(chosen)
        return f"{match.group(2) if match else '?'} ({chosen.strip()[:120]})"


def _kind(message: str) -> str | None:
    match = _WINE_MESSAGE.match(message)
    return match.group(1) if match else None



def resolve_env(env: Mapping[str, str], cache: Path) -> dict[str, str]:
    """The [smoke] env with each {library:MODULE} replaced by MODULE's Windows DLL (data/windows.toml)."""
    known = libraries()

    def dll(match: re.Match[str]) -> str:
        module = match.group(1)
        if module not in known:
            raise ToolkitError(f"[smoke] env names {{library:{module}}}, which has no Windows wheel pinned",
                               hint=f"add [library.{module}] to {Path(__file__).parent / 'data' / 'windows.toml'}")
        pinned = known[module]
        return windows_path(unpacked(pinned, cache) / pinned.dll)

    return {name: PLACEHOLDER.sub(dll, value) for name, value in env.items()}


def ep_component(site: Path, package: str) -> tuple[Path, str]:
    """The wheel's EP DLL and its EP name, from the package's own component table."""
    info = json.loads((site / package / "_wheel_info.json").read_text())
    for component in info["components"]:
        if component.get("ep_name"):
            return site / package / component["file"], component["ep_name"]
    raise ToolkitError(f"{package}: no component with an EP name in its _wheel_info.json")


def install(wheel: Path, into: Path) -> str:
    """Unpack the wheel as pip lays it out; returns its EP package (the one with _wheel_info.json)."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(into)
        packages = sorted({n.split("/")[0] for n in archive.namelist() if n.endswith("/_wheel_info.json")})
    if not packages:
        raise ToolkitError(f"{wheel}: no package with a _wheel_info.json; not a toolkit EP wheel")
    return packages[0]


def on_a_display(argv: list[str], env: Mapping[str, str]) -> list[str]:
    """Wine's graphics driver needs an X display for DXGI and D3D12: a virtual one where none is set."""
    if "DISPLAY" not in env and shutil.which("xvfb-run"):
        return ["xvfb-run", "-a", "-s", "-screen 0 640x480x24", *argv]
    return argv


def harness_run(exe: Path, ort_dll: Path, ep: Path, name: str, model: Path, config: Mapping[str, str],
                env: dict[str, str], cwd: Path) -> tuple[str, str, int]:
    argv = ["wine", str(exe), windows_path(ort_dll), windows_path(ep), name, windows_path(model),
            *map(str, MODEL_SHAPE), *(f"{key}={value}" for key, value in config.items())]
    result = run(on_a_display(argv, env), "the Windows smoke harness under Wine", output="capture", check=False,
                 cwd=cwd, env={**env, "WINEDEBUG": "err+all,fixme+all"}, timeout=600)
    return result.stdout or "", result.stderr or "", result.returncode


def report(result: Run, expect_log: tuple[str, ...]) -> list[str]:
    """The run's lines as the smoke prints them. A step that failed while Wine named a call it cannot carry is a
    STOP (where Wine's Windows ends), not a FAIL; a FAIL line is a failure of the wheel."""
    lines = []
    for step in (s for s in STEPS if s in result.steps):
        verdict, text = result.steps[step]
        wall = result.wine_wall(step) if verdict != "PASS" else None
        if verdict == "FAIL" and wall:
            verdict, text = "STOP", f"Wine cannot carry it: {wall}; ORT said: {text}"
        elif wall:
            text += f" (Wine's last word there: {wall})"
        lines.append(f"{verdict} {result.runtime} {result.version} {step}: {text}")
        if step == "register":
            lines += [f"  device {d}" for d in result.devices]
    ended = [s for s in result.begun if s in STEPS and s not in result.steps]
    if ended and "register" in result.steps:
        lines.append(_ended_in(result, ended[0]))
    if "register" not in result.steps:
        tail = "; ".join([*result.log, *(m for ms in result.wine.values() for m in ms)][-3:]) or "no output"
        lines.append(f"FAIL {result.runtime}: the harness exited {result.returncode} before registering: {tail}")
    lines += [f"FAIL {result.runtime}: the decoy {decoy} was loaded, not the copy the wheel carries"
              for decoy in decoys_loaded(result.log)]
    for pattern in expect_log:
        if not any(re.search(pattern, line) for line in result.log):
            lines.append(f"FAIL {result.runtime}: no EP log line matches {pattern!r}")
    return lines


def _ended_in(result: Run, step: str) -> str:
    """The line for a step the harness began and never finished: the process ended in it (an exception the EP let
    out of ORT's C API ends it in std::terminate). Wine's unimplemented call, where it named one, is the wall."""
    # Xvfb's own farewell is not the process's.
    last = [line.strip() for line in result.log if line.strip() and not line.startswith("X connection to")]
    said = "; ".join(last[-2:]) or "no output"
    wall = result.wine_wall(step)
    if wall:
        return (f"STOP {result.runtime} {result.version} {step}: Wine cannot carry it: {wall}; the process ended "
                f"(exit {result.returncode}): {said}")
    return f"FAIL {result.runtime} {result.version} {step}: the process ended (exit {result.returncode}): {said}"


def selfcheck_argv(python: Path, package: str, paths: list[Path], *options: str) -> list[str]:
    """`wine python.exe` running the wheel's self-check (`python -m PACKAGE OPTIONS`) in Windows CPython with `paths`
    first on sys.path: the embeddable distribution reads no PYTHONPATH."""
    code = ("import runpy, sys; sys.path[:0] = sys.argv[1].split(';'); sys.argv[1:] = sys.argv[2:]; "
            f"runpy.run_module({package!r}, run_name='__main__', alter_sys=True)")
    return ["wine", str(python / "python.exe"), "-c", code, ";".join(windows_path(p) for p in paths), *options]


def selfcheck_facts(stdout: str, stderr: str, returncode: int) -> tuple[dict[str, Any] | None, str]:
    """(the facts `--json` printed, or None where it printed none; the last of what else it said)."""
    out = stdout.replace("\r", "")
    start = out.find("{")
    try:
        facts = json.loads(out[start:]) if start >= 0 else None
    except ValueError:
        facts = None
    # ORT's Windows logger writes UTF-16: its NULs go.
    said = [line.strip() for line in (out[:max(start, 0)] + stderr).replace("\0", "").splitlines()
            if line.strip() and not line.startswith("X connection to")]
    return facts, "; ".join(said[-3:]) or f"exit {returncode}, no output"


def selfcheck_run(python: Path, package: str, paths: list[Path], env: dict[str, str],
                  cwd: Path) -> tuple[dict[str, Any] | None, str]:
    argv = on_a_display(selfcheck_argv(python, package, paths, "--json"), env)
    result = run(argv, "the wheel's self-check in Windows CPython under Wine", output="capture", check=False,
                 cwd=cwd, env={**env, "WINEDEBUG": "-all"}, timeout=600)
    return selfcheck_facts(result.stdout or "", result.stderr or "", result.returncode)


def selfcheck_line(runtime: str, version: str, facts: dict[str, Any] | None, said: str) -> str:
    """PASS when the self-check finds the EP ready here, FAIL with what it found missing (or what it said, where it
    printed no facts: a crash of the self-check is a failure of the wheel)."""
    if facts is None:
        return f"FAIL {runtime} {version} selfcheck: it printed no facts: {said}"
    carried = [f"{d['dll']} bound to {d['bound_to']}" for lib in facts.get("libraries", [])
               for d in lib.get("carried_imports") or []]
    where = f"{(facts.get('system') or {}).get('name')}; package in {facts.get('package_dir')}"
    where += "".join(f"; {text}" for text in carried)
    if facts.get("ready"):
        count = len(facts["registration"]["devices"])
        return f"PASS {runtime} {version} selfcheck: ready, {count} device(s) ({where})"
    return f"FAIL {runtime} {version} selfcheck: not ready: {facts.get('missing')} ({where})"


def run_wine_smoke(wheel: Path, settings: SmokeSettings, *, mingw: MingwPin, ort_include: Path, cache: Path,
                   env: Mapping[str, str] | None = None) -> int:
    """Run the harness for the wheel against each pinned ONNX Runtime; returns 0 when no step failed."""
    wheel = Path(wheel).resolve()
    if not wheel.is_file():
        raise ToolkitError(f"{wheel}: wheel not found", "run the wheel and repair stages first")
    exe = harness(mingw, ort_include, cache)
    prefix = wine_prefix(cache)
    python = python_folder(windows_python(), cache)
    packages = [unpacked(pinned, cache) for pinned in windows_python().package]
    smoke_env = resolve_env({**settings.env, **(env or {})}, cache)
    failed = False
    with tempfile.TemporaryDirectory(prefix="wine-smoke-", dir=cache) as tmp:
        site = Path(tmp) / "site-packages"
        package = install(wheel, site)
        library, name = ep_component(site, package)
        model = Path(tmp) / "matmul_relu.onnx"
        model.write_bytes(matmul_relu_model(*MODEL_SHAPE))
        carried = carried_dlls(library.parent, library)
        decoys = make_decoys(mingw, carried, Path(tmp) / "decoys")
        log.stage("smoke", f"decoys of {', '.join(p.name for p in carried) or 'no DLL'} in the working directory "
                           "and on PATH: the wheel's own copies must be the ones loaded")
        run_env = {**wine_env(prefix), **smoke_env, "WINEPATH": windows_path(decoys["path"])}
        for runtime in runtimes():
            runtime_site = unpacked(runtime, cache)
            ort_dll = runtime_site / runtime.dll
            log.stage("smoke", f"Wine: {runtime.requirement}'s onnxruntime.dll registers {library.name} as {name}")
            stdout, stderr, code = harness_run(exe, ort_dll, library, name, model, settings.session_config,
                                               run_env, decoys["cwd"])
            result = Run.parse(runtime.name, stdout, stderr, code)
            lines = report(result, settings.expect_log)
            log.stage("smoke", f"Wine: {package}'s self-check in Windows CPython beside {runtime.requirement}")
            facts, said = selfcheck_run(python, package, [site, runtime_site, *packages], run_env, decoys["cwd"])
            lines.append(selfcheck_line(runtime.name, result.version or runtime.requirement, facts, said))
            for line in lines:
                print(line, flush=True)
                failed = failed or line.startswith("FAIL")
    print("WINE SMOKE FAIL" if failed else "WINE SMOKE PASS", flush=True)
    return 1 if failed else 0
