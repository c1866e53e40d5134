"""What `container --root` binds into the sandbox: every local path a source, mirror or option names,
whatever URL form it is written in (planned with --dry-run: no root needed)."""

from __future__ import annotations

import os
import subprocess
import sys

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
