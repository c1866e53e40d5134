"""Reproducible releases: the environment a release builds in, and the comparison of two release folders.

Two release runs of the same entry give byte-identical wheels, SBOMs, provenance and SHA256SUMS when:

- every date comes from SOURCE_DATE_EPOCH (wheel entries, the SBOM's timestamp); the release sets it, when the
  caller did not, to the commit time of the project's checkout (the `container` command passes the host's
  value in), else to 1980-01-01, the earliest a zip can hold; provenance then records no run times;
- paths are the same: the container mounts the project and the build folder at fixed paths, and ccache makes
  paths under the work tree relative (CCACHE_BASEDIR), so cached objects do not carry another folder's path;
- archives are ordered and dated: the wheel is built by scikit-build-core with sorted members, auditwheel
  rewrites it dated by SOURCE_DATE_EPOCH; build ids are content hashes (the linker's default).

`python -m toolkit release-compare DIR1 DIR2` names the first difference: the file and, for a wheel, the first
zip member whose bytes or metadata differ (diffoscope, where installed, gives the full report); see compare.py.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from toolkit.release.compare import compare_dirs, first_text_difference, first_zip_difference
from toolkit.util.process import run_git

__all__ = ["ZIP_EPOCH", "compare_dirs", "first_text_difference", "first_zip_difference", "release_env",
           "epoch_env", "source_date_epoch"]

ZIP_EPOCH = 315532800   # 1980-01-01T00:00:00Z: the earliest date a zip entry can carry


def release_env(recipe: Path, project: Path | None = None) -> dict[str, str]:
    """Environment a release sets for its builds (the caller's own values win)."""
    env = {"TZ": "UTC", **epoch_env(project or Path(recipe).resolve().parent)}
    return {k: v for k, v in env.items() if not os.environ.get(k)}


def epoch_env(folder: Path) -> dict[str, str]:
    """SOURCE_DATE_EPOCH as the checkout holding `folder` dates it, unless this process's environment sets it."""
    return {} if os.environ.get("SOURCE_DATE_EPOCH") else {"SOURCE_DATE_EPOCH": str(source_date_epoch(folder))}


def source_date_epoch(folder: Path) -> int:
    """The commit time of the checkout holding `folder`, or ZIP_EPOCH where git cannot tell (no git, or a
    worktree whose repository is not mounted)."""
    if shutil.which("git") is None:
        return ZIP_EPOCH
    proc = run_git(["log", "-1", "--format=%ct"], [], "the project's commit time", cwd=folder, check=False)
    value = proc.stdout.strip()
    return int(value) if proc.returncode == 0 and value.isdigit() else ZIP_EPOCH
