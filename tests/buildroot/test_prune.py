"""`root prune`: a package set's earlier roots, the venvs made for them and its stale images are removed;
the current ones, other sets' things, anything in use or locked, and images that may be current are kept and
named. Roots and venvs are real folders in a toolkit cache of the test's own; images are real podman images."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.support.tools import ROOT, need
from toolkit.buildroot import image, make
from toolkit.recipe import packageset
from toolkit.util.locks import WorkLock

SET = """\
[root]
suite = "sid"

[packages]
tiny = ["hello"]
"""


def _toolkit(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)


def _folder(path: Path, size: int = 4096) -> Path:
    (path / "usr" / "bin").mkdir(parents=True)
    (path / "usr" / "bin" / "tool").write_bytes(b"x" * size)
    return path


def _venv(venvs: Path, key: str, root: Path | None) -> Path:
    venv = _folder(venvs / key)
    if root is not None:
        (venv / ".toolkit-root").write_text(f"{root}\n")
    return venv


def _import(tag: str, tmp: Path) -> None:
    member = tmp / "hello.txt"
    member.write_text("hello\n")
    archive = tmp / "image.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(member, arcname="hello.txt")
    proc = subprocess.run(["podman", "import", "--quiet", str(archive), tag], capture_output=True, text=True,
                          env=image.engine_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr


def _images(repository: str) -> set[str]:
    proc = subprocess.run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter",
                           f"reference={repository}"], capture_output=True, text=True, env=image.engine_env())
    return {line for line in proc.stdout.split() if line.startswith(repository + ":")}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A package set file `prunetest.toml`, a toolkit cache of its own with stale and kept roots and venvs, two
    images of the set's repository and one of a neighbour's; removed again at the end."""
    need("podman", "podman runc")
    need("runc", "runc")
    name = f"prunetest{os.getpid()}"
    spec_file = tmp_path / f"{name}.toml"
    spec_file.write_text(SET)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(cache))
    monkeypatch.delenv(make.ENV_BUILDROOT, raising=False)
    spec = packageset.load(spec_file)
    current = make.root_path(spec)
    roots = current.parent
    digest = spec.digest()[:16]
    other = "0123456789abcdef" if digest != "0123456789abcdef" else "fedcba9876543210"
    made = {
        "stale": _folder(roots / f"{name}-{other}", 1 << 20),
        "busy": _folder(roots / f"{name}-{'1' * 16}"),
        "locked": _folder(roots / f"{name}-{'2' * 16}"),
        "not a digest": _folder(roots / f"{name}-notadigest"),
        "other set": _folder(roots / f"other-{other}"),
        "partial": _folder(roots / f".{name}-{other}.tmp-12345"),            # its maker was killed
        "partial, maker at work": _folder(roots / f".{name}-{'2' * 16}.tmp-999"),
    }
    venvs = roots / "venvs"
    made |= {
        "venv of stale": _venv(venvs, "a" * 16, made["stale"]),
        "venv of a gone root": _venv(venvs, "b" * 16, roots / f"gone-{other}"),
        "venv of other set": _venv(venvs, "c" * 16, made["other set"]),
        "venv without record": _venv(venvs, "d" * 16, None),
    }
    repository = f"{image.REPOSITORY}{name}"
    tags = {"stale": f"{repository}:{other}-000000000000", "unsure": f"{repository}:{digest}-000000000000",
            "neighbour": f"{repository}x:{other}-000000000000"}
    for tag in tags.values():
        _import(tag, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # A process whose command line names the busy root, as bwrap's names the root it binds.
    user = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", str(made["busy"])])
    lock = WorkLock(made["locked"], wait=False).acquire()
    try:
        yield spec_file, made, tags, env
    finally:
        lock.release()
        user.kill()
        user.wait()
        subprocess.run(["podman", "rmi", "--force", *tags.values()], capture_output=True, env=image.engine_env())


def test_dry_run_lists_and_removes_nothing(cache):
    spec_file, made, tags, env = cache
    proc = _toolkit("root", "prune", str(spec_file), "--dry-run", env=env)
    assert proc.returncode == 1, proc.stderr    # the busy root cannot go
    out = proc.stdout
    assert f"would remove root {made['stale']} (1.0 MiB)" in out
    assert f"would remove root {made['locked']} " in out        # a dry run takes no lock
    assert f"would remove venv {made['venv of stale']} " in out
    assert f"would remove venv {made['venv of a gone root']} " in out
    assert f"would remove partial root {made['partial']} " in out
    assert f"would remove image {tags['stale']} " in out
    assert f"kept root {made['busy']} (" in out and "in use by pid " in out
    for kept in ("not a digest", "other set", "venv of other set", "venv without record"):
        assert str(made[kept]) not in out, kept
    assert all(path.is_dir() for path in made.values())
    assert _images(tags["stale"].rpartition(":")[0]) == {tags["stale"], tags["unsure"]}


def test_prune_removes_the_stale_and_keeps_the_rest(cache):
    spec_file, made, tags, env = cache
    shown = _toolkit("root", "show", str(spec_file), env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"image:       {tags['stale']} " in shown.stdout and "(stale)" in shown.stdout
    assert f"`.nox/toolkit/bin/python -m toolkit root prune {spec_file}` removes the stale ones" in shown.stdout
    assert (f"stale root:  {made['stale']} (`.nox/toolkit/bin/python -m toolkit root prune {spec_file}` "
            "removes it)") in shown.stdout

    proc = _toolkit("root", "prune", str(spec_file), env=env)
    assert proc.returncode == 1, proc.stderr
    gone = ("stale", "venv of stale", "venv of a gone root", "partial")
    for key in gone:
        assert not made[key].exists(), key
    assert all(made[key].is_dir() for key in made if key not in gone)
    # Nothing half-deleted or locked is left beside them.
    leftovers = [p.name for p in made["stale"].parent.iterdir() if p.name.startswith(".")]
    assert sorted(leftovers) == sorted([f".{made['locked'].name}.lock", made["partial, maker at work"].name])
    assert f"kept root {made['busy']} (" in proc.stdout and "in use by pid" in proc.stdout
    assert f"kept root {made['locked']} (" in proc.stdout and f"is in use by pid {os.getpid()}" in proc.stdout
    assert f"kept image {tags['unsure']} (" in proc.stdout and "which tag is current is not known" in proc.stdout
    assert f"kept partial root {made['partial, maker at work']} (" in proc.stdout
    assert "removed 1 root(s), 2 venv(s), 1 image(s), 1 partial root(s); 3 stale thing(s) could not be removed" \
        in proc.stderr
    repository = tags["stale"].rpartition(":")[0]
    assert _images(repository) == {tags["unsure"]}
    assert _images(repository + "x") == {tags["neighbour"]}

    again = _toolkit("root", "prune", str(spec_file), env=env)
    assert "removed 0 root(s), 0 venv(s), 0 image(s)" in again.stderr



def test_a_link_in_the_venvs_folder_is_removed_never_followed(tmp_path, monkeypatch):
    """A link among the venvs (to a folder outside the cache that looks like a stale venv): the link goes, its
    target is untouched, and the rest of the prune (a real stale venv) still happens; no traceback."""
    name = f"prunelink{os.getpid()}"
    spec_file = tmp_path / f"{name}.toml"
    spec_file.write_text(SET)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(cache))
    monkeypatch.delenv(make.ENV_BUILDROOT, raising=False)
    roots = make.root_path(packageset.load(spec_file)).parent
    outside = _venv(tmp_path / "outside", "victim", roots / "gone-0123456789abcdef")
    (outside / "CANARY").write_text("must stay")
    venvs = roots / "venvs"
    stale = _venv(venvs, "e" * 16, roots / "gone-0123456789abcdef")
    link = venvs / ("f" * 16)
    link.symlink_to(outside)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(cache)}
    proc = _toolkit("root", "prune", str(spec_file), env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"removed venv link {link} -> {outside} (not followed)" in proc.stdout
    assert not link.is_symlink() and not link.exists()
    assert (outside / "CANARY").read_text() == "must stay" and (outside / "usr" / "bin" / "tool").is_file()
    assert not stale.exists() and f"removed venv {stale} " in proc.stdout
    assert not [p for p in venvs.iterdir() if p.name.startswith(".")], "a renamed leftover stayed behind"
