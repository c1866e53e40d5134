"""Fresh venvs beside the ONNX Runtime flavours users have (PyPI's onnxruntime, AMD's onnxruntime-migraphx and
onnxruntime-rocm, onnxruntime-genai): every package downloaded once per test session into one folder, each venv
filled from that folder alone, with the machine's own pip configuration (its find-links and extra indexes) out of
the way, so what a venv holds is what PyPI serves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

from toolkit.smoke.venvs import clean_env


def pip_env() -> dict[str, str]:
    """The environment pip runs in: no configuration file and no PIP_* setting of this machine."""
    env = {k: v for k, v in clean_env().items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


class Wheelhouse:
    """One folder of PyPI's wheels for the session: `fetch` downloads what is not there yet (pip skips the files it
    has), `venv` makes a fresh venv holding requirements installed from the folder and local wheels, no index."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def fetch(self, *requirements: str, python_version: str | None = None, platform: str | None = None) -> Path:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(self.folder)]
        if python_version:
            cmd += ["--python-version", python_version, "--implementation", "cp", "--platform",
                    platform or "manylinux_2_28_x86_64", "--platform", "manylinux_2_34_x86_64"]
        done = subprocess.run([*cmd, *requirements], capture_output=True, text=True, env=pip_env(), timeout=900)
        assert done.returncode == 0, done.stdout + done.stderr
        return self.folder

    def venv(self, where: Path, *requirements: str) -> Path:
        """A fresh venv at `where` with `requirements` (names, or paths of wheels) from this folder; its python."""
        venv.EnvBuilder(with_pip=False, clear=True).create(where)
        python = where / "bin" / "python"
        cmd = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index", "--find-links",
               str(self.folder), *map(str, requirements)]
        done = subprocess.run(cmd, capture_output=True, text=True, env=pip_env(), timeout=900)
        assert done.returncode == 0, done.stdout + done.stderr
        return python


def installed(python: Path) -> dict[str, str]:
    """name -> version of every distribution in the venv (`pip list`)."""
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "list", "--format", "json"],
                          capture_output=True, text=True, env=pip_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    return {p["name"].lower(): p["version"] for p in json.loads(done.stdout)}
