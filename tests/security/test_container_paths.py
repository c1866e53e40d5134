"""`container`: host folders are resolved and checked before the engine runs. `/`, system folders, home folders and
their dot-folders are refused as build, out, source, cache or bind folders, as is a path holding ':'; `--bind`
without `--root` is an error; `--dry-run` creates nothing on the host. The engine is the real podman on PATH,
which a refusal never reaches (an audit hook records every process started)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.injection import toolkit_here
from tests.support.tools import need


def _snapshot(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _container(tmp_path: Path, *options: str):
    need("podman", "podman runc")
    return toolkit_here(tmp_path, "container", "--engine", "podman", "--image", "localhost/img:1", *options,
                        "--dry-run", "release")


@pytest.mark.parametrize(("option", "path", "needle"), [
    ("--build-dir", "/", "is the host's root folder"),
    ("--source", "/etc", "is in the system folder /etc"),
    ("--out", "/usr/lib", "is in the system folder /usr"),
    ("--build-dir", "/proc/self", "is in the system folder /proc"),
    ("--out", "/boot", "is in the system folder /boot"),
    ("--cache", "/dev/shm", "is in the system folder /dev"),
    ("--out", "/root", "is a home folder"),
])
def test_system_folders_are_refused_before_podman_runs(tmp_path, option, path, needle):
    before = _snapshot(tmp_path)
    line = _container(tmp_path, option, path).assert_refused(f"container {option} {path}: {needle}")
    assert "refused as a folder to mount" in line
    assert _snapshot(tmp_path) == before


def test_a_home_dot_folder_and_a_link_to_a_system_folder_are_refused(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_canary").write_text("CANARY-KEY")
    monkeypatch.setenv("HOME", str(home))
    out = _container(tmp_path, "--out", str(home / ".ssh"))
    line = out.assert_refused(f"--out {home / '.ssh'}: is in a dot-folder of the home folder {home}")
    assert "CANARY-KEY" not in out.stderr
    link = tmp_path / "innocent"
    link.symlink_to("/etc")
    out = _container(tmp_path, "--build-dir", str(link))
    line = out.assert_refused(f"--build-dir {link}: is in the system folder /etc (resolves to /etc)")
    assert line


def test_a_colon_in_a_host_path_is_refused(tmp_path):
    folder = tmp_path / "a:rw,z"
    folder.mkdir()
    _container(tmp_path, "--source", str(folder)).assert_refused(f"--source {folder}: holds ':'")


def test_bind_without_root_is_an_error(tmp_path):
    need("podman", "podman runc")
    out = toolkit_here(tmp_path, "container", "--bind", str(tmp_path), "release")
    out.assert_refused("--bind works only with --root")


def test_bind_with_root_is_checked_too(tmp_path):
    out = toolkit_here(tmp_path, "container", "--root", "debian-sid-rocm", "--bind", "/etc", "--dry-run", "build")
    out.assert_refused("container --bind /etc: is in the system folder /etc")


def test_dry_run_creates_nothing_on_the_host(tmp_path, monkeypatch, capsys):
    """--out, --build-dir and --cache that do not exist yet: printed in the engine command, never made."""
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "toolkit-cache"))
    out = _container(tmp_path, "--out", str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"),
                     "--cache", str(tmp_path / "c"))
    assert out.rc == 0, out.stderr
    printed = capsys.readouterr().out
    assert f"{tmp_path / 'out'}:/work/out" in printed and f"{tmp_path / 'b'}:/work/build" in printed
    assert not any("podman" in args for _, args in out.started), "the dry run ran the engine"
    made = [p for p in ("out", "b", "c") if (tmp_path / p).exists()]
    assert not made, f"the dry run made {made}"
    assert not os.path.exists(tmp_path / "build")
