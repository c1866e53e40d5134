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


# -- a repository git cannot read is not a missing revision -------------------------------------------

def test_a_repository_git_cannot_read_is_reported_with_gits_own_words(tmp_path):
    need("git")
    repo_with(tmp_path / "enclosing", {"a": "1"})  # a folder inside a repository is still not one
    (tmp_path / "enclosing" / "inner").mkdir()
    (tmp_path / "plain").mkdir()
    for folder in (tmp_path / "absent", tmp_path / "plain", tmp_path / "enclosing" / "inner"):
        with pytest.raises(ToolkitError) as caught:
            resolve(folder.as_uri(), "main")
        assert caught.value.message == (f"git cannot read {folder.as_uri()}: "
                                        f"fatal: '{folder}' does not appear to be a git repository")
        assert "is not in" not in caught.value.message
        assert caught.value.hint.startswith("no network? pass --mirror file://<mirror>")


def test_a_readable_repository_without_the_revision_says_so(tmp_path):
    need("git")
    repo_with(tmp_path / "work", {"a": "1"})
    git("clone", "-q", "--bare", str(tmp_path / "work"), str(tmp_path / "bare.git"))
    url = (tmp_path / "bare.git").as_uri()
    assert resolve(url, "main").ref == "refs/heads/main"
    with pytest.raises(ToolkitError) as caught:
        resolve(url, "release/9")
    assert caught.value.message == f"revision 'release/9' is not in {url}"
    assert caught.value.hint == ("give a branch, a tag, a commit id (a short one too) or any revision git "
                                 "understands (main~1, v1.2^) that the repository holds")


def test_a_mirror_git_cannot_read_is_passed_over_with_a_warning(tmp_path, capsys):
    need("git")
    commit = repo_with(tmp_path / "upstream", {"a": "1"})
    url = (tmp_path / "upstream").as_uri()
    broken = tmp_path / "mirror" / "localhost" / str(tmp_path / "upstream").lstrip("/")  # where a mirror holds it
    broken.mkdir(parents=True)
    found = resolve(url, "main", ((tmp_path / "mirror").as_uri(),))
    assert (found.commit, found.where) == (commit, url)
    assert f"warning: git could not read {broken.as_uri()} (fatal: '{broken}' does not appear to be a git " \
           f"repository); 'main' was resolved in {url}" in capsys.readouterr().err


def test_bump_offline_against_a_mirror_git_cannot_read_names_it(tmp_path):
    need("git")
    mirror = tmp_path / "mirror"
    held = mirror / "github.com" / "onnxruntime" / "onnxruntime-ep-amdgpu.git"
    held.mkdir(parents=True)  # the mirror's folder for the recipe's repository, with no repository in it
    out = toolkit_here(tmp_path, "bump", "--recipe", "umbrella-ep-real", "--to", "main", "--mirror", mirror.as_uri(),
                       "--offline", "--check", "--build-dir", str(tmp_path / "build"))
    assert out.rc == 2, out.stderr
    assert f"error: git cannot read {held.as_uri()}: fatal: '{held}' does not appear to be a git repository" \
           in out.stderr.splitlines()
    assert "is not in" not in out.stderr and not (tmp_path / "build").exists()
