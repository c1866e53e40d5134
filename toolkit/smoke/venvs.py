"""Fresh venvs for the smoke tests: made without pip of their own, filled by the toolkit's pip (`pip --python`)."""

from __future__ import annotations

import os
import shutil
import site
import sys
import venv
from collections.abc import Iterable
from pathlib import Path

from toolkit.util import log
from toolkit.util.process import run


def create_venv(where: Path, inherit_site_packages: bool) -> Path:
    """A fresh venv at `where` (replacing what was there); returns its python.

    Without pip of its own: the toolkit's pip installs into it (`pip --python`), which saves the
    ensurepip step and works where a system python lacks ensurepip. With `inherit_site_packages`, a
    .pth file appends this interpreter's site-packages after the venv's own, so onnxruntime and onnx
    come from here on machines with no package index, while the wheels under test still install fresh
    into the venv (and shadow any copy here). venv's own system_site_packages would not do: it sees the
    base interpreter, not the venv this toolkit may be running in.
    """
    if where.exists():
        shutil.rmtree(where)
    venv.EnvBuilder(with_pip=False, clear=True).create(where)
    python = where / "bin" / "python"
    if inherit_site_packages:
        purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                      "asking the smoke venv for its site-packages").stdout.strip()
        inherited = [p for p in dict.fromkeys(site.getsitepackages()) if os.path.isdir(p)]
        Path(purelib, "_toolkit_inherited_site.pth").write_text("\n".join(inherited) + "\n")
    return python


def pip_install(python: Path, requirements: list[str], find_links: Iterable[Path], no_index: bool) -> None:
    cmd = [sys.executable, "-m", "pip", "--python", str(python), "install", "--disable-pip-version-check",
           "--no-input", "--quiet"]
    if no_index:
        cmd.append("--no-index")
    for folder in find_links:
        cmd += ["--find-links", str(folder)]
    cmd += requirements
    log.stage("smoke", "pip install " + " ".join(requirements))
    run(cmd, "pip install into the smoke venv", output="merge",
        hint="offline? pass --find-links DIR (with --no-index) holding onnxruntime, onnx and numpy wheels")


def clean_env() -> dict[str, str]:
    # The toolkit's own PYTHONPATH (pytest sets one) must not leak the source tree into the venv.
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
