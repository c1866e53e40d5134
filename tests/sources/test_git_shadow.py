"""A mirror's bare repository that a copy left without its empty refs/ folder (every ref in packed-refs): git
refuses it as "not a git repository"; the toolkit reads it through a shadow in the cache, for a build's fetch and
for bump's resolve, and writes nothing where the mirror is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.git_repos import bare_with_commits, git
from tests.support.tools import need
from toolkit.sources.cache import Cache
from toolkit.sources.git import fetch_git
from toolkit.upstream.resolve import resolve
from toolkit.util.cachedir import ENV_CACHE_DIR

URL = "https://example.org/team/proj.git"


def _mirror_without_refs(tmp: Path) -> tuple[Path, list[str]]:
    """BASE/example.org/team/proj.git holding two commits, its refs packed and its refs/ tree gone."""
    work, commits = bare_with_commits(tmp, "proj", [{"a.txt": "one\n"}, {"a.txt": "two\n"}])
    bare = tmp / "proj.git"
    git("pack-refs", "--all", cwd=bare)
    base = tmp / "mirror"
    repo = base / "example.org" / "team" / "proj.git"
    # A copy that keeps files only: the (now empty) refs/ folders do not come along.
    for f in bare.rglob("*"):
        if f.is_file():
            (repo / f.relative_to(bare)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, repo / f.relative_to(bare))
    shutil.rmtree(repo / "refs", ignore_errors=True)
    return base, commits


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_fetch_and_resolve_read_a_mirror_without_refs_folder(tmp_path, capsys, monkeypatch):
    need("git")
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    base, commits = _mirror_without_refs(tmp_path)
    repo = base / "example.org" / "team" / "proj.git"
    before = _files(repo)
    # git itself refuses the folder:
    refused = subprocess.run(["git", "ls-remote", str(repo)], capture_output=True, text=True)
    assert refused.returncode != 0 and "does not appear to be a git repository" in refused.stderr

    cache = Cache(tmp_path / "cache")
    tree = fetch_git(URL, commits[0], cache, offline=True, mirrors=(base.as_uri(),))
    assert (tree / "a.txt").read_text() == "one\n"
    assert "has no refs/ folder" in capsys.readouterr().err

    revision = resolve(URL, "main", (base.as_uri(),), offline=True)
    assert revision.commit == commits[1] and revision.ref == "refs/heads/main"
    assert revision.where == repo.as_uri()  # a report names the mirror, not the shadow in the cache
    # Nothing was written where the mirror is.
    assert _files(repo) == before and not (repo / "refs").exists()
