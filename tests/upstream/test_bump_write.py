"""What `bump` writes: recipe edits that keep everything else as written and still load as a recipe, and the
all-or-nothing write of several files (an interrupted one is finished by the next bump, never left half)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.support.tools import ROOT
from toolkit.recipe.load import load_recipe
from toolkit.upstream import commit, edit

REAL = ROOT / "recipes" / "umbrella-ep-real.toml"


@pytest.fixture
def real_copy(tmp_path):
    shutil.copytree(ROOT / "recipes", tmp_path / "recipes")
    shutil.copytree(ROOT / "patches" / "umbrella-ep-real", tmp_path / "patches" / "umbrella-ep-real")
    return tmp_path / "recipes" / "umbrella-ep-real.toml"


def test_edits_change_only_their_lines_and_the_recipe_still_loads(real_copy):
    before = real_copy.read_text()
    text = edit.set_commit(before, "1" * 40)
    text = edit.set_dep_url(text, "JSON", "https://github.com/nlohmann/json/archive/refs/tags/v3.11.3.tar.gz")
    text = edit.add_dep(text, "safeint", "https://github.com/dcleblanc/SafeInt/archive/refs/tags/3.0.28.tar.gz",
                        "Added by `bump`: the tree declares it.")
    text = edit.remove_dep(text, "absl")
    real_copy.write_text(text)
    recipe = load_recipe(real_copy)
    assert recipe.source.commit == "1" * 40
    deps = {d.name: d.archive.url for d in recipe.fetchcontent}
    assert deps["json"].endswith("/v3.11.3.tar.gz") and "absl" not in deps
    assert list(deps)[-1] == "safeint"  # after the last entry, before [wheel]
    removed = {line for line in before.splitlines() if not line.startswith("#")} - set(text.splitlines())
    assert removed == {'commit = "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22"',
                       'url = "https://github.com/nlohmann/json/archive/refs/tags/v3.12.0.tar.gz"', 'name = "absl"',
                       'url = "https://github.com/abseil/abseil-cpp/archive/refs/tags/20250512.1.tar.gz"',
                       'asked_by = "protobuf"', "find_package = true"}
    assert "# protobuf v34 asks for abseil itself" not in text  # the entry's own comment went with it
    assert "# DirectX builds only (Windows)" in text  # the next entry's comment stayed


def test_an_edit_of_a_missing_entry_is_refused():
    with pytest.raises(Exception, match="no \\[\\[fetchcontent\\]\\] entry named 'nope'"):
        edit.set_dep_url(REAL.read_text(), "nope", "https://example.org/x.tar.gz")


def test_an_interrupted_write_is_finished_by_the_next_one(tmp_path, monkeypatch):
    files = {tmp_path / name: f"old {name}\n".encode() for name in ("a.toml", "b.lock.toml", "series")}
    for path, data in files.items():
        path.write_bytes(data)
    doomed = tmp_path / "0004.patch"
    doomed.write_text("old patch\n")
    new = {path: data.replace(b"old", b"new") for path, data in files.items()}
    real_replace, calls = os.replace, []

    def crash_after_one(src, dst):
        if calls:
            raise KeyboardInterrupt("power cut")
        calls.append(dst)
        real_replace(src, dst)

    monkeypatch.setattr(commit.os, "replace", crash_after_one)
    with pytest.raises(KeyboardInterrupt):
        commit.commit(tmp_path, new, [doomed])
    assert (tmp_path / commit.JOURNAL).is_file()  # half done, and it says so
    monkeypatch.setattr(commit.os, "replace", real_replace)
    commit.recover(tmp_path)
    assert {p: p.read_bytes() for p in files} == new
    assert not doomed.exists() and not (tmp_path / commit.JOURNAL).exists()
    assert not list(tmp_path.glob("*.toolkit-bump.tmp"))
    assert commit.commit(tmp_path, new, []) == []  # nothing left to change
