"""What `container --root` binds into the sandbox: every local path a source, mirror or option names,
whatever URL form it is written in (planned with --dry-run: no root needed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.support.tools import ROOT


def planned_binds(tmp_path, *args: str) -> list[str]:
    env = {**os.environ, "TOOLKIT_BUILD_DIR": str(tmp_path / "build")}
    plan = subprocess.run([sys.executable, "-m", "toolkit", "container", "--root", "debian-sid-rocm", "--dry-run",
                           "build", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    return plan.stdout.splitlines()[0].split("binds: ")[1].split()


def test_a_git_file_source_binds_its_repository(tmp_path):
    repo = tmp_path / "umbrella.git"
    repo.mkdir()
    binds = planned_binds(tmp_path, "--source", f"git+file://{repo}@{'a' * 40}")
    assert binds == [str(ROOT), str(repo), str(tmp_path / "build")]


def test_an_archive_with_its_checksum_binds_the_file(tmp_path):
    archive = tmp_path / "tree.tar.gz"
    archive.write_bytes(b"")
    binds = planned_binds(tmp_path, f"--source=file://{archive}#sha256={'b' * 64}", "--mirror", f"file://{tmp_path}")
    assert binds == [str(ROOT), str(archive), str(tmp_path), str(tmp_path / "build")]


def test_a_path_holding_an_at_sign_is_bound_whole(tmp_path):
    odd = tmp_path / "rel@2"
    odd.mkdir()
    assert planned_binds(tmp_path, "--source", str(odd))[1] == str(odd)


def test_paths_that_do_not_exist_are_not_bound(tmp_path):
    binds = planned_binds(tmp_path, "--source", f"git+file://{tmp_path}/missing.git@{'a' * 40}")
    assert binds == [str(ROOT), str(tmp_path / "build")]


def _linked_shared(tmp_path):
    """The guides' layout: a project folder beside `../shared`, here a symbolic link to a folder elsewhere."""
    real = tmp_path / "disk" / "shared"
    (real / "upstream" / "mirror" / "github.com").mkdir(parents=True)
    (real / "src.tar.gz").write_bytes(b"")
    (real / "repo.git").mkdir()
    project = tmp_path / "p"
    project.mkdir()
    (tmp_path / "shared").symlink_to(real, target_is_directory=True)
    return project, real


def test_each_host_path_is_resolved_once_and_handed_in_as_it_is_bound(tmp_path):
    """Links followed and `..` gone, in every form an argument names a path; what names none is left alone."""
    from toolkit.buildroot.hostargs import host_arguments

    project, real = _linked_shared(tmp_path)
    commit = "a" * 40
    given = host_arguments(
        ["--recipe", "umbrella-ep-real", "--mirror", f"file://{project}/../shared/upstream/mirror", "--offline",
         "--source", f"file://{project}/../shared/src.tar.gz#sha256={'b' * 64}", "--with-hipdnn",
         f"--build-dir={project}/../shared/b-not-made", "--cache=../shared/upstream", "--bind", "../shared",
         f"git+file://{tmp_path}/shared/repo.git@{commit}", "https://example.org/x.tar.gz", "./missing"],
        cwd=project)
    assert list(given.args) == [
        "--recipe", "umbrella-ep-real", "--mirror", f"file://{real}/upstream/mirror", "--offline",
        "--source", f"file://{real}/src.tar.gz#sha256={'b' * 64}", "--with-hipdnn",
        f"--build-dir={project}/../shared/b-not-made", f"--cache={real}/upstream", "--bind", str(real),
        f"git+file://{real}/repo.git@{commit}", "https://example.org/x.tar.gz", "./missing"]
    assert list(given.binds) == [real / "upstream" / "mirror", real / "src.tar.gz", real / "upstream", real,
                                 real / "repo.git"]
    for path in given.binds:   # each is a real path: what the sandbox binds is where the argument points
        assert path.exists() and os.path.realpath(path) == str(path)


def test_the_guides_root_command_hands_in_the_mirror_where_it_is_bound(tmp_path):
    """`container --root NAME build ... --mirror file://$PWD/../shared/upstream/mirror` with ../shared a link, run from
    the project folder (and the same mirror in $TOOLKIT_MIRRORS): the bind and what the session inside is handed are
    the same resolved folder (it was bound resolved and handed in as given: `no such folder` inside)."""
    project, real = _linked_shared(tmp_path)
    mirror = f"file://{project}/../shared/upstream/mirror"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_MIRRORS": mirror}
    env.pop("TOOLKIT_BUILD_DIR", None)
    plan = subprocess.run([sys.executable, "-m", "toolkit", "container", "--root", "debian-sid-rocm7", "--dry-run",
                           "build", "--recipe", "umbrella-ep-real", "--mirror", mirror, "--offline", "--with-hipdnn",
                           "--wheel"], cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    binds_line, inside, *mirrors = plan.stdout.splitlines()
    assert inside == ("inside: python -m toolkit build --recipe umbrella-ep-real --mirror "
                      f"file://{real}/upstream/mirror --offline --with hipdnn --wheel "
                      f"(build folder {project}/build/roots/debian-sid-rocm7)")
    assert mirrors == [f"inside: TOOLKIT_MIRRORS=file://{real}/upstream/mirror"]
    assert binds_line.split("binds: ")[1].split() == [
        str(project), str(real / "upstream" / "mirror"), str(project / "build" / "roots" / "debian-sid-rocm7")]


def test_an_image_session_mounts_and_names_the_same_resolved_folder(tmp_path):
    """The same for a session in an image: the read-only mount and the session's argument are one path."""
    if not shutil.which("podman"):
        assert os.environ.get("CI") != "true", "podman is needed in CI"
        pytest.skip("podman is not installed (apt-get install podman)")
    project, real = _linked_shared(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plan = subprocess.run([sys.executable, "-m", "toolkit", "container", "--engine", "podman", "--image", "img:1",
                           "--runner", "toolkit", "--dry-run", "build", "--recipe", "umbrella-ep-real", "--mirror",
                           f"file://{project}/../shared/upstream/mirror", "--offline"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    assert f"--volume {real}/upstream/mirror:{real}/upstream/mirror:ro" in plan.stdout
    assert plan.stdout.rstrip().endswith(f"python3 -m toolkit build --recipe umbrella-ep-real --mirror "
                                         f"file://{real}/upstream/mirror --offline")
