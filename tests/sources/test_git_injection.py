"""Git sources an attacker writes: option-looking URLs and commits, ext:: transports, hostile submodule URLs.
Each is refused before git runs with it, in one line naming the option or key, and the command it smuggles
never runs (the canary file it would touch stays absent). Real git, real repositories in tmp_path."""

from __future__ import annotations

import pytest

from tests.support.injection import git, processes_started, repo_with, toolkit_here
from tests.support.tools import need
from toolkit.recipe.sources import SourceSettings
from toolkit.sources.cache import Cache
from toolkit.sources.git import fetch_git
from toolkit.util.errors import RecipeError, ToolkitError
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml

COMMIT = "a" * 40


def _build(tmp_path, source: str):
    return toolkit_here(tmp_path, "build", "--source", source, "--build-dir", str(tmp_path / "b"))


def test_option_looking_git_url_on_the_command_line(tmp_path):
    canary = tmp_path / "CANARY"
    out = _build(tmp_path, f"git+--upload-pack=touch {canary}@{COMMIT}")
    out.assert_refused("--source git+URL@COMMIT: URL: '--upload-pack=touch", "starts with '-'",
                       "expected a git URL (https://, ssh://, git://, file://, user@host:path or a local path)")
    assert not canary.exists() and not (tmp_path / "b").exists()


def test_option_looking_commit_on_the_command_line(tmp_path):
    canary = tmp_path / "CANARY"
    out = _build(tmp_path, f"git+file://{tmp_path}@--upload-pack=touch {canary}")
    out.assert_refused("--source", "a full 40-hex commit")
    assert not canary.exists() and not (tmp_path / "b").exists()


def test_ext_url_on_the_command_line(tmp_path):
    canary = tmp_path / "CANARY"
    out = _build(tmp_path, f"git+ext::sh -c touch% {canary}@{COMMIT}")
    out.assert_refused("--source git+URL@COMMIT: URL: 'ext::sh", "remote-helper transport ext::")
    assert not canary.exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("git", "--upload-pack=touch CANARY", "starts with '-'"),
    ("git", "ext::sh -c touch% CANARY", "remote-helper transport ext::"),
    ("git", "fd::3", "remote-helper transport fd::"),
    ("commit", "--upload-pack=touch CANARY", "expected a full 40-hex commit id"),
])
def test_hostile_recipe_source_names_file_and_key(tmp_path, key, value, problem):
    fields = {"git": "https://e/x.git", "commit": COMMIT, key: value}
    recipe = tmp_path / "r.toml"
    recipe.write_text("[source]\n" + "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in fields.items()))
    with processes_started() as started, pytest.raises(RecipeError) as err:
        read(SourceSettings, load_toml(recipe).table("source"))
    assert str(err.value).startswith(f"{recipe}: key 'source.{key}': ") and problem in str(err.value)
    assert not started


def test_fetch_refuses_what_it_is_handed_before_git_runs(tmp_path):
    """The fetch checks again where it uses the values, whatever reader handed them over."""
    canary = tmp_path / "CANARY"
    cache = Cache(tmp_path / "cache")
    for url, commit, needle in ((f"--upload-pack=touch {canary}", COMMIT, "git source: '--upload-pack"),
                                (f"ext::sh -c touch% {canary}", COMMIT, "remote-helper transport ext::"),
                                (str(tmp_path), f"--upload-pack=touch {canary}", "is not a commit id")):
        with processes_started() as started, pytest.raises(ToolkitError, match=needle):
            fetch_git(url, commit, cache)
        assert not started
    assert not canary.exists() and not (tmp_path / "cache").exists()


def _hostile_superproject(tmp_path, submodule_url: str) -> tuple[str, str]:
    """A bare repository whose commit has a submodule pointing at `submodule_url`; (its file URL, commit)."""
    inner = repo_with(tmp_path / "inner", {"a.txt": "inner\n"})
    gitmodules = f'[submodule "evil"]\n\tpath = third_party/evil\n\turl = {submodule_url}\n'
    commit = repo_with(tmp_path / "work", {".gitmodules": gitmodules, "CMakeLists.txt": "# x\n"},
                       {"third_party/evil": inner})
    git("clone", "-q", "--bare", str(tmp_path / "work"), str(tmp_path / "super.git"))
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=tmp_path / "super.git")
    return (tmp_path / "super.git").as_uri(), commit


@pytest.mark.parametrize("scheme", ["ext", "http"])
def test_submodule_url_outside_the_accepted_schemes(tmp_path, scheme):
    need("git")
    canary = tmp_path / "CANARY"
    bad = f"ext::sh -c touch% {canary}" if scheme == "ext" else "http://127.0.0.1:9/evil.git"
    url, commit = _hostile_superproject(tmp_path, bad)
    with pytest.raises(ToolkitError) as err:
        fetch_git(url, commit, Cache(tmp_path / "cache"), submodules=True)
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith(f"git source {url} at {commit}: .gitmodules: submodule.evil.url: {bad!r} ")
    assert "expected a git URL (https://" in line
    assert not canary.exists()
    assert not (tmp_path / "cache" / "git").exists() or not any((tmp_path / "cache" / "git").rglob(commit))


def test_submodule_ext_url_through_the_build_command(tmp_path):
    need("git")
    canary = tmp_path / "CANARY"
    url, commit = _hostile_superproject(tmp_path, f"ext::sh -c touch% {canary}")
    out = toolkit_here(tmp_path, "build", "--source", f"git+{url}@{commit}", "--build-dir", str(tmp_path / "b"),
                       "--until", "patch")
    assert out.rc == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and ".gitmodules: submodule.evil.url: 'ext::sh" in errors[0], out.stderr
    assert not any("'submodule', 'update'" in args for _, args in out.started), "git submodule update ran"
    assert any("'fetch'" in args for _, args in out.started)  # the superproject itself was fetched
    assert not canary.exists()
