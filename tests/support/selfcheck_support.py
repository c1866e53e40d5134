"""Helpers for the tests of the wheels' self-check (`python -m onnxruntime_ep_amdgpu`): a fresh venv holding a wheel
(with PyPI's onnxruntime at a given version, or none), the self-check run there, and the lowest and newest
onnxruntime releases a range allows on the package index."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path
from types import ModuleType

from packaging.requirements import Requirement

from toolkit.smoke.selfcheck import available_versions, range_ends
from toolkit.smoke.venvs import clean_env, create_venv, pip_install
from toolkit.wheel import data as wheel_data

PACKAGE = "onnxruntime_ep_amdgpu"
# What the self-check says to do where no ONNX Runtime is installed: the flavours, one only.
NO_ORT = ("not ready: no ONNX Runtime is installed (this EP needs onnxruntime>=1.24, the plugin EP API). What to do: "
          "install one: pip install 'onnxruntime>=1.24' (the CPU build) or pip install 'onnxruntime-migraphx>=1.24' "
          "(AMD's build with its MIGraphX EP, for ROCm 7); one only, they share the onnxruntime module")


def other_variant(major: str, named: str = "") -> str:
    """The self-check's advice for the other ROCm major: the meta-package installs rocm7, rocm6 by its name; a build
    with a named feature (`named`: "-hipdnn") is its own distribution, which no meta-package names."""
    other = "7" if major == "6" else "6"
    if named:
        return (f"for ROCm {other} instead: pip uninstall onnxruntime-ep-amdgpu-rocm{major}{named}, "
                f"then pip install onnxruntime-ep-amdgpu-rocm{other}{named}")
    command = "pip install onnxruntime-ep-amdgpu" if other == "7" else "pip install onnxruntime-ep-amdgpu-rocm6"
    return (f"for ROCm {other} instead: pip uninstall onnxruntime-ep-amdgpu onnxruntime-ep-amdgpu-rocm{major}, "
            f"then {command}")


# Debian 12's os-release, as the self-check reads it: a distribution without Debian's ROCm 6 or 7 packages.
BOOKWORM = {"id": "debian", "version_id": "12", "codename": "bookworm", "name": "Debian GNU/Linux 12 (bookworm)"}


def this_system() -> dict:
    """This machine's distribution as the self-check reads it (templates/selfcheck.py: system)."""
    return load_template("selfcheck").system()


def install_text(soname: str, system: dict | None = None) -> str:
    """What the self-check tells this machine (or `system`) to install for `soname`."""
    return load_template("advice").install_words(wheel_data.install_source(soname), system or this_system())


def hip_not_found(major: str, system: dict | None = None, named: str = "") -> str:
    """The verdict of a rocmN wheel where the loader finds no HIP runtime, on this machine (or `system`): what is
    missing, what provides it."""
    soname = f"libamdhip64.so.{major}"
    return (f"not ready: needs ROCm {major} ({soname} not found). What to do: install "
            f"{install_text(soname, system)}, or put "
            f"the folder that holds {soname} on LD_LIBRARY_PATH; {other_variant(major, named)}")


def venv_with(where: Path, wheel: Path) -> Path:
    """A fresh venv holding `wheel` alone, no index (beside PyPI's packages: the session's wheelhouse)."""
    python = create_venv(where, False)
    pip_install(python, ["--no-deps", str(wheel)], (), True)
    return python


def run_selfcheck(python: Path, *args: str, env: dict[str, str] | None = None,
                  cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-I", "-m", PACKAGE, *args], capture_output=True, text=True,
                          env={**clean_env(), **(env or {})}, cwd=cwd, timeout=300)


def run_python(python: Path, code: str, env: dict[str, str] | None = None,
               cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True,
                          env={**clean_env(), **(env or {})}, cwd=cwd, timeout=300)


def verdict(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, done.stdout + done.stderr
    return lines[-1]


def ort_range_ends(spec: str, probe_dir: Path) -> list[str]:
    """The lowest and the newest onnxruntime release on the index that `spec` (e.g. '>=1.24') allows."""
    probe = create_venv(probe_dir, False)
    return [str(v) for v in range_ends(Requirement(f"onnxruntime{spec}"), available_versions(probe, clean_env()))]


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "using-the-wheel.md"
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def guide_snippets(lang: str) -> list[str]:
    """The fenced `lang` blocks of the using-the-wheel guide, as written."""
    return [body for kind, body in _FENCE.findall(GUIDE.read_text(encoding="utf-8")) if kind == lang]


def selfcheck_commands() -> list[str]:
    """The guide's `python -m onnxruntime_ep_amdgpu ...` command lines (comments dropped)."""
    return [line.split("#")[0].strip() for body in guide_snippets("sh") for line in body.splitlines()
            if line.startswith(f"python -m {PACKAGE}")]


def write_model(path: Path) -> Path:
    """A one-node ONNX model (Relu over float[2]), the guide's model.onnx."""
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "guide",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    path.write_bytes(model.SerializeToString())
    return path


TEMPLATES = Path(__file__).resolve().parents[2] / "toolkit" / "wheel" / "templates"


def load_template(name: str) -> ModuleType:
    """A module the wheels ship (templates/selfcheck.py, advice.py) loaded from its template, outside any package."""
    spec = importlib.util.spec_from_file_location(f"{name}_template", TEMPLATES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
