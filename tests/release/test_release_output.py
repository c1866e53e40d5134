"""What a release prints: each line once where an entry runs in a container of its root (the release inside says
nothing the host's says), the removal of the entries' work trees said with its size, and in a container the
user's host paths, not the mounts' inside paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.release_wheels import builder
from toolkit.cli import main as cli
from toolkit.container import engine as container
from toolkit.recipe.release import ReleaseSettings, TargetSet
from toolkit.release import in_root, make_release
from toolkit.release.matrix import plan_matrix
from toolkit.release.orchestrator import run_release
from toolkit.util import hostview, log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import tree_usage

RECIPE = ('[recipe]\nname = "r"\n[release]\npython = ["3.12"]\n'
          '[[release.target_set]]\nname = "cdna"\ntargets = ["gfx90a"]\n'
          '[[release.target_set]]\nname = "rdna"\ntargets = ["gfx1100"]\n')


def _entries():
    return plan_matrix(ReleaseSettings(python=("3.12",), target_sets=(TargetSet("cdna", ("gfx90a",)),
                                                                       TargetSet("rdna", ("gfx1100",)))))


def _lines(err: str, text: str) -> list[str]:
    return [line for line in err.splitlines() if text in line]


def test_an_entry_built_in_a_container_prints_its_lines_once(release_libs, tmp_path, monkeypatch, capsys):
    """The host release builds each entry with `release --only ID` inside (as in_root.build_in_root_image does,
    with the environment it hands in); `building ID`, its SBOM line and `wrote` each come once."""
    recipe = tmp_path / "r.toml"
    recipe.write_text(RECIPE)
    monkeypatch.setattr(make_release, "pipeline_builder",
                        lambda recipe_path, **_: builder(release_libs))
    monkeypatch.delenv("TOOLKIT_COMPILE_CACHE", raising=False)

    def in_container(entry, work):
        with monkeypatch.context() as inside:
            inside.setenv("TOOLKIT_IN_IMAGE", "debian-sid-rocm7")
            inside.setenv(in_root.ENTRY_ENV, entry.id)
            assert cli.main(["release", "--recipe", str(recipe), "--only", entry.id, "--out",
                             str(work / "dist")]) == 0
        wheel = next((work / "dist").glob("*.whl"))
        return wheel, {"sources": [{"name": "r", "uri": "https://example.invalid/r.tar.gz", "sha256": "a" * 64}]}

    run_release(_entries(), in_container, tmp_path / "out", toolchain={})
    err = capsys.readouterr().err
    for entry in ("cp312-cdna", "cp312-rdna"):
        assert len(_lines(err, f"release: building {entry}")) == 1, err
    assert len(_lines(err, "SBOM lists")) == 2, err
    assert len(_lines(err, "release: wrote")) == 1, err


def test_the_release_inside_a_root_is_told_which_entry_it_builds(tmp_path, monkeypatch):
    seen = {}

    def fake_run(argv, what, **kwargs):
        seen.update(kwargs["env"])
        return type("Proc", (), {"returncode": 3})()

    monkeypatch.setattr(in_root, "run", fake_run)
    entry = _entries()[0]
    with pytest.raises(ToolkitError):
        in_root.build_in_root_image(tmp_path / "r.toml", entry, tmp_path, release_args=[], offline=True)
    assert seen[in_root.ENTRY_ENV] == entry.id
    # It reaches the session inside: the container passes it on.
    inside = container.container_env(container.Mounts(project=tmp_path), {in_root.ENTRY_ENV: entry.id})
    assert inside[in_root.ENTRY_ENV] == entry.id
    # Only a release in a root reads it; on the host it is no one's entry.
    monkeypatch.setenv(in_root.ENTRY_ENV, entry.id)
    monkeypatch.delenv("TOOLKIT_IN_IMAGE", raising=False)
    monkeypatch.delenv("TOOLKIT_IN_ROOT", raising=False)
    assert in_root.entry_of_host_release() is None
    monkeypatch.setenv("TOOLKIT_IN_IMAGE", "debian-sid-rocm7")
    assert in_root.entry_of_host_release() == entry.id


def test_removing_the_work_trees_says_what_and_how_big_after_the_release_is_written(release_libs, tmp_path, capsys):
    """An entry built in a container leaves its whole build folder in its work tree; removing it takes minutes,
    so a line names it, with its file count and size, once the release is in place."""
    make = builder(release_libs)

    def build(entry, work):
        if entry.id.endswith("cdna"):
            (work / "build" / "obj").mkdir(parents=True)
            for i in range(3):
                (work / "build" / "obj" / f"{i}.o").write_bytes(b"x" * 2048)
        return make(entry, work)

    out = tmp_path / "out"
    result = run_release(_entries(), build, out, toolchain={})
    err = capsys.readouterr().err.splitlines()
    removing = [i for i, line in enumerate(err) if "removing the work trees" in line]
    wrote = [i for i, line in enumerate(err) if "release: wrote" in line]
    assert len(removing) == 1 and wrote and wrote[0] < removing[0], err
    # Three objects and the two wheels the builder wrote there.
    assert "of 2 entries (cp312-cdna, cp312-rdna: their build folders, 5 files, " in err[removing[0]], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]   # nothing set aside is left
    assert result.wheels and all(w.is_file() for w in result.wheels)


def test_nothing_to_remove_prints_no_removal_line(release_libs, tmp_path, capsys):
    make = builder(release_libs)

    def build(entry, work):   # as the pipeline does on the host: the wheel is elsewhere, the work tree empty
        elsewhere = tmp_path / "built" / entry.id
        elsewhere.mkdir(parents=True)
        return make(entry, elsewhere)

    run_release(_entries(), build, tmp_path / "out", toolchain={})
    assert "removing" not in capsys.readouterr().err


def test_tree_usage_counts_files_links_and_bytes(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "one").write_bytes(b"1" * 100)
    (tmp_path / "a" / "b" / "two").write_bytes(b"2" * 50)
    os.symlink("/nonexistent/target", tmp_path / "a" / "link")
    os.symlink(tmp_path / "a", tmp_path / "dirlink")   # not followed
    files, size = tree_usage(tmp_path)
    assert files == 4
    assert size == 150 + len("/nonexistent/target") + len(str(tmp_path / "a"))


# -- the user's paths ------------------------------------------------------------------------------------------

def test_a_container_session_is_handed_the_host_path_of_each_mount(tmp_path):
    mounts = container.Mounts(project=tmp_path / "p", build=tmp_path / "b", out=tmp_path / "o",
                              cache=tmp_path / "c", cache_inside=str((tmp_path / "c").resolve()))
    env = container.container_env(mounts, {hostview.ENV: '{"/elsewhere": "/x"}'})
    assert json.loads(env[hostview.ENV]) == {container.PROJECT: str((tmp_path / "p").resolve()),
                                             container.BUILD: str((tmp_path / "b").resolve()),
                                             container.OUT: str((tmp_path / "o").resolve())}


@pytest.mark.parametrize(("printed", "shown"), [
    ("wrote 1 wheel(s) to /work/build/umbrella-ep-real/dist", "wrote 1 wheel(s) to /home/u/p/b/umbrella-ep-real/dist"),
    ("recipe r (/work/project/recipes/r.toml)", "recipe r (/home/u/p/recipes/r.toml)"),
    ("in /work/build", "in /home/u/p/b"),
    ("file:///work/project/x", "file:///home/u/p/x"),
    ("/work/builds/x and /x/work/build and /work/build2", "/work/builds/x and /x/work/build and /work/build2"),
])
def test_printed_paths_inside_a_container_are_the_host_paths(printed, shown):
    env = {hostview.ENV: json.dumps({"/work/project": "/home/u/p", "/work/build": "/home/u/p/b"})}
    assert hostview.host_text(printed, env) == shown
    assert hostview.host_text(printed, {}) == printed


def test_log_lines_and_the_error_line_name_the_host_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(hostview.ENV, json.dumps({"/work/project": str(tmp_path)}))
    log.stage("release", "wrote 1 wheel(s) to /work/project/build/r/dist")
    log.warn("/work/project/recipes/r.toml: an old key")
    assert cli.main(["release", "--recipe", "/work/project/recipes/nope.toml", "--dry-run"]) != 0
    err = capsys.readouterr().err
    assert "/work/project" not in err, err
    assert f"release: wrote 1 wheel(s) to {tmp_path}/build/r/dist" in err
    assert f"warning: {tmp_path}/recipes/r.toml: an old key" in err
    assert f"error: {tmp_path}/recipes/nope.toml" in err, err


def test_outside_a_container_paths_print_as_they_are(monkeypatch, capsys):
    monkeypatch.delenv(hostview.ENV, raising=False)
    log.stage("release", f"wrote to {Path('/work/build/x')}")
    assert "wrote to /work/build/x" in capsys.readouterr().err
