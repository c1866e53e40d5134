"""Pointing bump at a local clone, as the bump guide shows it: the clone laid out under a mirror folder as
<host>/<path> of the recipe's git URL, passed with --mirror file://DIR, answers short ids and main~1 offline;
a revision none of the repositories holds gets a hint that says what they do understand."""

from __future__ import annotations

import pytest

from tests.support.injection import git, repo_with
from tests.support.tools import need
from toolkit.upstream.resolve import missing_hint, resolve
from toolkit.util.errors import ToolkitError

UPSTREAM = "https://github.com/onnxruntime/onnxruntime-ep-amdgpu.git"


def test_a_local_clone_under_a_mirror_answers_short_ids_and_steps_offline(tmp_path):
    need("git")
    work = tmp_path / "work"
    first = repo_with(work, {"a": "1"})
    (work / "a").write_text("2")
    git("commit", "-q", "-am", "second", cwd=work)
    mirror = tmp_path / "mirror"
    (mirror / "github.com" / "onnxruntime").mkdir(parents=True)
    git("clone", "-q", str(work), str(mirror / "github.com" / "onnxruntime" / "onnxruntime-ep-amdgpu.git"))
    mirrors = (mirror.as_uri(),)
    assert resolve(UPSTREAM, "main~1", mirrors, offline=True).commit == first
    assert resolve(UPSTREAM, first[:8], mirrors, offline=True).commit == first
    with pytest.raises(ToolkitError) as caught:
        resolve(UPSTREAM, "release/9", mirrors, offline=True)
    assert "short one too" in caught.value.hint and "main~1" in caught.value.hint


def test_the_hint_for_a_remote_says_what_it_knows_and_how_to_use_a_local_clone():
    short = missing_hint("a2ea3b25", [UPSTREAM])
    assert short.startswith("a remote repository lists no short commit ids: give all 40 hex digits")
    step = missing_hint("main~1", [UPSTREAM])
    assert step.startswith("a remote repository knows branches, tags and full 40-hex commits")
    for hint in (short, step):
        assert "put it at DIR/<host>/<path> (the source URL's host and path) and pass --mirror file://DIR" in hint
