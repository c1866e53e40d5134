"""What `root run -- CMD ARGS` binds and where it runs (docs/explanation/build-roots.md): the project, each host
path the command names (resolved once, at its own path) and each --bind, the command running in the project, as a
session inside a root does. Checked on bwrap's argument list over a stand-in root folder: no build root is made."""

from __future__ import annotations

from pathlib import Path

from tests.support.tools import ROOT, need
from toolkit.buildroot.sandbox import bwrap_argv
from toolkit.buildroot.session import run_plan


def stand_in_root(folder: Path) -> Path:
    """A folder bwrap_argv takes for a root: its usr/, and a /usr/lib the command may name."""
    (folder / "usr" / "lib").mkdir(parents=True)
    (folder / "etc").mkdir()
    return folder


def bound(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv) if word == "--bind"]


def chdir(argv: list[str]) -> str:
    return argv[argv.index("--chdir") + 1]


def test_the_project_and_the_paths_the_command_names_are_bound_and_it_runs_in_the_project(tmp_path):
    need("bwrap", "bubblewrap")
    root = stand_in_root(tmp_path / "root")
    data = tmp_path / "host" / "data"
    data.mkdir(parents=True)
    (tmp_path / "link").symlink_to(data, target_is_directory=True)
    extra = tmp_path / "extra"
    extra.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plan = run_plan(["ls", str(tmp_path / "link"), f"--out={data}", "/usr/lib", "hipcc"], [extra], root=root,
                    project=ROOT, cwd=elsewhere)
    # The link is bound where it leads and handed on as that path; /usr/lib is the root's own, not the host's.
    assert plan.argv == ("ls", str(data), f"--out={data}", "/usr/lib", "hipcc")
    assert plan.binds == (ROOT, extra, data)
    argv = bwrap_argv(root, list(plan.argv), binds=plan.binds, cwd=plan.cwd)
    assert set(bound(argv)) == {str(ROOT), str(extra), str(data)}
    assert chdir(argv) == str(ROOT)   # the caller's folder is not bound: the command runs in the project
    assert argv[-6:] == ["--", "ls", str(data), f"--out={data}", "/usr/lib", "hipcc"]


def test_a_caller_inside_the_project_keeps_its_folder(tmp_path):
    need("bwrap", "bubblewrap")
    root = stand_in_root(tmp_path / "root")
    plan = run_plan(["true"], [], root=root, project=ROOT, cwd=ROOT / "docs")
    assert plan.cwd == ROOT / "docs"
    assert chdir(bwrap_argv(root, list(plan.argv), binds=plan.binds, cwd=plan.cwd)) == str(ROOT / "docs")
