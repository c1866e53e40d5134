"""`pypi:<wheel file name>`: a wheel from the package index this machine's pip is configured with.

A recipe names a wheel of PyPI by its file name (`pypi:onnxruntime_directml-1.24.4-cp312-cp312-win_amd64.whl`), never
by an index's host: pip fetches it from whatever index its own configuration (pip.conf, PIP_INDEX_URL) names, for the
platform and Python the file name gives, in hash-checking mode when the recipe pins it. The wheel then enters the
download cache as any download does.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from packaging.utils import parse_wheel_filename

from toolkit.recipe.pinned import PYPI_SCHEME
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import sha256_file
from toolkit.util.process import run

__all__ = ["PYPI_SCHEME", "pip_download"]


def pip_download(url: str, sha256: str | None, dest: Path) -> Path:
    """Download the wheel `url` names with pip into dest; returns its path (checked against sha256 when given)."""
    filename = url[len(PYPI_SCHEME):]
    name, version, _, tags = parse_wheel_filename(filename)
    tag = sorted(tags, key=str)[0]
    python = tag.interpreter[2:] if tag.interpreter.startswith("cp") else None
    requirement = f"{name}=={version}" + (f" --hash=sha256:{sha256}" if sha256 else "")
    with tempfile.TemporaryDirectory(prefix="pypi-", dir=dest) as tmp:
        listed = Path(tmp) / "requirements.txt"
        listed.write_text(requirement + "\n")
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
               "--platform", tag.platform, "-r", str(listed), "-d", str(Path(tmp) / "dl")]
        if python is not None:
            cmd += ["--python-version", ".".join((python[0], python[1:])), "--implementation", "cp",
                    "--abi", tag.abi]
        if sha256:
            cmd.append("--require-hashes")
        run(cmd, f"pip download {filename}", output="capture",
            hint="pip fetches it from the package index its configuration names (pip.conf, PIP_INDEX_URL)")
        got = Path(tmp) / "dl" / filename
        if not got.is_file():
            found = ", ".join(p.name for p in (Path(tmp) / "dl").iterdir()) or "nothing"
            raise ToolkitError(f"pip download of {url} gave {found}, not {filename}",
                               hint="check the wheel's file name in the recipe against the index's")
        if sha256 and sha256_file(got) != sha256:
            raise ToolkitError(f"{url}: sha256 {sha256_file(got)}, expected {sha256}",
                               hint="the index serves other bytes under that name; check the recipe's sha256")
        out = dest / filename
        shutil.move(str(got), out)
    return out
