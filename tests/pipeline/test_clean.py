"""`clean` removes build outputs and nothing in use: README's `nox -s clean` (no selector) removes every work tree
of the build folder and nothing else; a work tree a running build holds is refused, naming the build's pid, or
waited for with --wait; --cache removes the toolkit cache's downloads only, under their locks, and --dry-run
shows sizes."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.support.http import tiny_tarball
from tests.support.tools import ROOT
from toolkit.util.locks import WorkLock, holder_of


def _toolkit(tmp_path: Path, *args: str, cache: str = "cache") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(tmp_path / cache)}
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _start(tmp_path: Path, *args: str, cache: str = "cache") -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(tmp_path / cache)}
    return subprocess.Popen([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _work_tree(root: Path, recipe: str, variant: str) -> Path:
    tree = root / recipe / variant
    (tree / "state").mkdir(parents=True)
    (tree / "state" / "source.json").write_text("{}")
    (tree / "lib").mkdir()
    (tree / "lib" / "libx.so").write_bytes(b"\x7fELF" + bytes(2044))
    return tree


def _info(proc) -> list[str]:
    return [line.removeprefix("[toolkit] ") for line in proc.stderr.splitlines()]


def test_clean_without_a_selector_removes_every_work_tree_and_nothing_else(tmp_path):
    """README: `nox -s clean` | remove build outputs. The session runs `clean` with no argument."""
    root = tmp_path / "build"
    trees = [_work_tree(root, "amdgpu-ep", "release"), _work_tree(root, "amdgpu-ep", "try"),
             _work_tree(root, "vecops", "release")]
    (root / "site").mkdir()
    (root / "site" / "index.html").write_text("the docs site")         # not a work tree
    (root / "amdgpu-ep" / "dist").mkdir()
    (root / "amdgpu-ep" / "dist" / "SHA256SUMS").write_text("a release")  # a release's output, not a work tree
    (tmp_path / "cache" / "downloads" / "ab").mkdir(parents=True)
    dry = _toolkit(tmp_path, "clean", "--build-dir", str(root), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert _info(dry) == [f"would remove {t} (2.0 KiB)" for t in trees]
    assert all(t.is_dir() for t in trees)
    proc = _toolkit(tmp_path, "clean", "--build-dir", str(root))
    assert proc.returncode == 0, proc.stderr
    assert _info(proc) == [f"removed {t} (2.0 KiB)" for t in trees]
    assert not any(t.exists() for t in trees)
    assert (root / "site" / "index.html").is_file() and (root / "amdgpu-ep" / "dist" / "SHA256SUMS").is_file()
    assert (tmp_path / "cache" / "downloads" / "ab").is_dir()
    again = _toolkit(tmp_path, "clean", "--build-dir", str(root))
    assert again.returncode == 0 and _info(again) == [f"nothing removed: no work tree under {root}"]


def _wait_for_holder(tree: Path, proc: subprocess.Popen) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        holder = holder_of(tree)
        if holder and holder.startswith(f"pid {proc.pid} "):
            return holder
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"{proc.pid} never took the lock on {tree}")


def test_a_work_tree_a_build_is_using_is_refused_naming_the_build_or_waited_for(tmp_path, server):
    data = tiny_tarball()
    sha = hashlib.sha256(data).hexdigest()
    url = server.add("/t-1.tar.gz", data)
    recipe = tmp_path / "t.toml"
    recipe.write_text(f'[recipe]\nname = "t"\n[source]\nurl = "{url}"\nsha256 = "{sha}"\n')
    root = tmp_path / "build"
    build = ("build", "--recipe", str(recipe), "--until", "source", "--build-dir", str(root))
    first = _toolkit(tmp_path, *build)
    assert first.returncode == 0, first.stderr
    tree = root / "t" / "release"
    assert (tree / "state").is_dir()

    # A second build that must download again (an empty download cache, its unpacked copy gone) from a slow
    # server: it holds the work tree while it waits.
    shutil.rmtree(tree / "upstream")
    server.add("/t-1.tar.gz", data, fault="delay", delay=25)
    running = _start(tmp_path, *build, "--force", cache="cache2")
    holder = _wait_for_holder(tree, running)
    clean = ("clean", "--recipe", str(recipe), "--variant", "release", "--build-dir", str(root))
    refused = _toolkit(tmp_path, *clean)
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [f"error: clean: {tree} is in use by {holder}; nothing was removed",
                                           "  hint: let it finish, or run clean again with --wait to wait for it"]
    for args in (("clean", "--build-dir", str(root)), ("clean", "--recipe", str(recipe), "--build-dir", str(root)),
                 ("clean", "--all", "--build-dir", str(root))):
        assert _toolkit(tmp_path, *args).returncode == 2, args
    dry = _toolkit(tmp_path, *clean, "--dry-run")
    assert dry.returncode == 0 and _info(dry) == [f"in use by {holder}: {tree} (clean refuses it; --wait waits for "
                                                  "it)"], dry.stderr
    assert (tree / "state").is_dir() and running.poll() is None

    waited = _toolkit(tmp_path, *clean, "--wait")
    out, err = running.communicate(timeout=120)
    assert running.returncode == 0, err[-3000:]           # the build finished, undisturbed
    assert waited.returncode == 0, waited.stderr
    assert _info(waited)[0] == f"waiting for {holder}, which holds the lock on {tree}"
    assert _info(waited)[-1].startswith(f"removed {tree} (")
    assert not tree.exists()


def test_the_cache_option_removes_the_downloads_only_and_none_in_use(tmp_path):
    cache = tmp_path / "cache"
    for rel, size in (("downloads/aa11/x.tar.gz", 3000), ("downloads/bb22/y.zip", 1000), ("partial/url-k.part", 500),
                      ("git/u1/c0ffee/CMakeLists.txt", 24), ("content/d1.json", 20),
                      ("roots/debian-sid-rocm-0123456789abcdef/usr/bin/hipcc", 10), ("ccache/0/x", 10),
                      ("zig/0.14/zig", 10), ("compile-check/ab/k.json", 10), ("unpacked/s/include/x.h", 10)):
        (cache / rel).parent.mkdir(parents=True, exist_ok=True)
        (cache / rel).write_bytes(bytes(size))
    (cache / "locks").mkdir()
    kept = [cache / n for n in ("ccache", "compile-check", "locks", "roots", "unpacked", "zig")]
    dry = _toolkit(tmp_path, "clean", "--cache", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = _info(dry)
    assert lines[:4] == [f"would remove 2 entries of {cache / 'downloads'} (3.9 KiB)",
                         f"would remove 1 entry of {cache / 'partial'} (500 B)",
                         f"would remove 1 entry of {cache / 'git'} (24 B)",
                         f"would remove 1 entry of {cache / 'content'} (20 B)"]
    assert f"kept {cache / 'roots'}: build roots: `root prune NAME` removes the stale ones" in lines
    assert all(p.exists() for p in cache.rglob("*"))

    with WorkLock(cache / "downloads" / "bb22", file=cache / "locks" / "bb22.lock"):  # a download of it runs
        refused = _toolkit(tmp_path, "clean", "--cache")
        assert refused.returncode == 2
        assert refused.stderr.startswith(f"error: clean: {cache / 'downloads' / 'bb22'} is in use by pid "
                                         f"{os.getpid()} ")
        assert (cache / "downloads" / "aa11" / "x.tar.gz").is_file()   # nothing was removed
    proc = _toolkit(tmp_path, "clean", "--cache")
    assert proc.returncode == 0, proc.stderr
    for name in ("downloads", "partial", "git", "content"):
        assert not any((cache / name).iterdir()), name
    assert all(p.is_dir() and any(p.iterdir()) or p.name == "locks" for p in kept)
    assert not any((cache / "locks").iterdir())   # the locks clean took are gone with it


def test_a_work_tree_in_use_at_any_depth_is_guarded_and_builds_made_in_roots_are_reached(tmp_path):
    """A build in a root writes build/roots/<root>/<recipe>/<variant> under the toolkit's WorkLock: `clean --all`
    refuses build/roots while it runs (it looked one folder deep), and plain `clean` and `clean --recipe` reach
    the work trees of builds made in roots (they never did)."""
    root = tmp_path / "build"
    host = _work_tree(root, "umbrella-ep-real", "release")
    in_root = _work_tree(root / "roots" / "debian-sid-rocm7", "umbrella-ep-real", "release")
    other = _work_tree(root / "roots" / "debian-sid-rocm", "vecops", "release")
    with WorkLock(in_root):   # the lock `build` takes on its work tree, held by this process
        holder = holder_of(in_root)
        assert holder and holder.startswith(f"pid {os.getpid()} ")
        dry = _toolkit(tmp_path, "clean", "--all", "--build-dir", str(root), "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert f"in use by {holder}: {root / 'roots'}, which holds {in_root} (clean refuses it; --wait waits " \
               "for it)" in _info(dry), dry.stderr
        assert f"would remove {root / 'roots'}" not in dry.stderr
        for args in (("--all",), (), ("--recipe", "umbrella-ep-real"), ("--recipe", "umbrella-ep-real",
                                                                        "--variant", "release")):
            refused = _toolkit(tmp_path, "clean", *args, "--build-dir", str(root))
            assert refused.returncode == 2, (args, refused.stderr)
            assert refused.stderr.splitlines()[0] == (f"error: clean: {in_root} is in use by {holder}; nothing was "
                                                      "removed"), (args, refused.stderr)
            assert all((t / "state").is_dir() for t in (host, in_root, other)), args
    dry = _toolkit(tmp_path, "clean", "--build-dir", str(root), "--dry-run")
    assert _info(dry) == [f"would remove {t} (2.0 KiB)" for t in (host, other, in_root)], dry.stderr
    recipe = _toolkit(tmp_path, "clean", "--recipe", "umbrella-ep-real", "--build-dir", str(root))
    assert recipe.returncode == 0, recipe.stderr
    # (each recipe folder holds, besides its work tree, the lock file clean took on it)
    assert [line.split(" (")[0] for line in _info(recipe)] == [
        f"removed {root / 'umbrella-ep-real'}", f"removed {root / 'roots' / 'debian-sid-rocm7' / 'umbrella-ep-real'}"]
    assert not host.exists() and not in_root.exists() and (other / "state").is_dir()
    plain = _toolkit(tmp_path, "clean", "--build-dir", str(root))
    assert plain.returncode == 0 and _info(plain) == [f"removed {other} (2.0 KiB)"], plain.stderr
