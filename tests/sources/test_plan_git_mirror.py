"""A dry run's line for a git source says what the build then does: a file:// mirror holds a repository as a bare
repository, a folder, and the plan names that mirror where the fetch reads it, offline too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.git_repos import bare_with_commits
from tests.support.tools import ROOT, need
from toolkit.recipe.sources import SourceSettings
from toolkit.sources.cache import Cache
from toolkit.sources.context import FetchContext
from toolkit.sources.git import fetch_git
from toolkit.sources.plan import plan_source
from toolkit.util.errors import ToolkitError

URL = "https://example.org/team/proj.git"


def _mirror(tmp: Path) -> tuple[Path, str]:
    """BASE/example.org/team/proj.git, a bare repository of one commit, and that commit."""
    _, commits = bare_with_commits(tmp, "proj", [{"a.txt": "one\n"}])
    base = tmp / "mirror"
    (base / "example.org" / "team").mkdir(parents=True)
    shutil.copytree(tmp / "proj.git", base / "example.org" / "team" / "proj.git", symlinks=True)
    return base, commits[0]


def test_plan_names_the_file_mirror_the_offline_fetch_reads(tmp_path):
    need("git")
    base, commit = _mirror(tmp_path)
    cache = Cache(tmp_path / "cache")
    settings = SourceSettings(git=URL, commit=commit)
    offline = FetchContext(cache, offline=True, mirrors=(base.as_uri(),))
    assert f"[from mirror {base.as_uri()}]" in plan_source(settings, offline, tmp_path / "dest")
    # ... and the build does that: the offline fetch reads the mirror.
    tree = fetch_git(URL, commit, cache, offline=True, mirrors=(base.as_uri(),))
    assert (tree / "a.txt").read_text() == "one\n"
    assert "[cached]" in plan_source(settings, offline, tmp_path / "dest")


def test_plan_says_offline_cannot_get_what_no_mirror_holds(tmp_path):
    need("git")
    _, commit = _mirror(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    cache = Cache(tmp_path / "cache")
    settings = SourceSettings(git=URL, commit=commit)
    line = plan_source(settings, FetchContext(cache, offline=True, mirrors=(empty.as_uri(),)), tmp_path / "dest")
    assert "offline cannot get it" in line
    with pytest.raises(ToolkitError, match="offline: git source"):
        fetch_git(URL, commit, cache, offline=True, mirrors=(empty.as_uri(),))
    online = plan_source(settings, FetchContext(cache, mirrors=(empty.as_uri(),)), tmp_path / "dest")
    assert f"[from upstream {URL}]" in online


def test_hip_ep_dry_run_reads_a_bare_repository_in_the_mirror(tmp_path):
    """`build --recipe hip-ep --mirror file://... --offline --dry-run`, through the real command line."""
    base = tmp_path / "mirror"
    repo = base / "github.com" / "ROCm" / "hip-ep.git"
    repo.parent.mkdir(parents=True)
    need("git")
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "build", "--recipe", "hip-ep", "--mirror", base.as_uri(), "--offline",
         "--build-dir", str(tmp_path / "build"), "--dry-run"],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    source = next(line for line in proc.stdout.splitlines() if "source: git https://github.com/ROCm/hip-ep.git" in line)
    assert f"[from mirror {base.as_uri()}]" in source, source
