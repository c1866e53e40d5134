"""`bump --to REV` takes names from people and scheduled jobs: an option-looking or malformed ref is refused
before git runs, in one line naming --to; good names still resolve in a real repository."""

from __future__ import annotations

import pytest

from tests.support.injection import git, processes_started, repo_with, toolkit_here
from tests.support.tools import need
from toolkit.upstream.resolve import resolve
from toolkit.util.errors import ToolkitError


@pytest.mark.parametrize("rev", ["-x", "--upload-pack=touch CANARY"])
def test_bump_to_option_looking_ref_is_refused(tmp_path, rev):
    out = toolkit_here(tmp_path, "bump", "--recipe", "umbrella-ep-real", f"--to={rev}", "--offline")
    out.assert_refused(f"--to: {rev!r} starts with '-'", "expected a commit id, a branch or a tag")
    assert not (tmp_path / "CANARY").exists()


@pytest.mark.parametrize("rev", ["-x", "a..b", "main@{1}", "x.lock", "a b", "a:b"])
def test_resolve_refuses_bad_refs_before_git_runs(tmp_path, rev):
    with processes_started() as started, pytest.raises(ToolkitError, match=r"^--to: .*git check-ref-format rules"):
        resolve(str(tmp_path), rev)
    assert not started


def test_resolve_refuses_a_hostile_source_url(tmp_path):
    canary = tmp_path / "CANARY"
    for url in (f"--upload-pack=touch {canary}", f"ext::sh -c touch% {canary}"):
        with processes_started() as started, pytest.raises(ToolkitError, match=r"^\[source\] git: "):
            resolve(url, "main")
        assert not started
    assert not canary.exists()


def test_resolve_still_reads_branches_tags_and_steps(tmp_path):
    need("git")
    first = repo_with(tmp_path / "r", {"a": "1"})
    (tmp_path / "r" / "a").write_text("2")
    git("commit", "-q", "-am", "second", cwd=tmp_path / "r")
    git("tag", "v2", cwd=tmp_path / "r")
    second = git("rev-parse", "HEAD", cwd=tmp_path / "r")
    url = (tmp_path / "r").as_uri()
    assert resolve(url, "main").commit == second
    assert resolve(url, "main").ref == "refs/heads/main"
    assert resolve(url, "v2").ref == "refs/tags/v2"
    assert resolve(url, "main~1").commit == first
    assert resolve(url, first[:10]).commit == first
