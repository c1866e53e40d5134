"""Hostile archives never touch anything outside the destination, even when they are finally refused.

Canary files and folders sit outside the destination; every test compares their bytes, modes and mtimes
(and the list of what exists around the destination) before and after the extraction.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from toolkit.sources.extract import extract_archive
from toolkit.util.errors import ToolkitError

OLD = 1_000_000_000  # an mtime no extraction would set by accident


def _sandbox(tmp_path: Path) -> tuple[Path, Path]:
    """tmp_path/outside holds canaries (a 0600 file, a folder with a file); tmp_path/work/dest is the target."""
    outside = tmp_path / "outside"
    (outside / "cdir").mkdir(parents=True)
    canary = outside / "canary.txt"
    canary.write_bytes(b"canary\n")
    (outside / "cdir" / "inner.txt").write_bytes(b"inner\n")
    os.chmod(canary, 0o600)
    os.chmod(outside / "cdir", 0o700)
    for p in (canary, outside / "cdir" / "inner.txt", outside / "cdir", outside):
        os.utime(p, (OLD, OLD))
    (tmp_path / "work").mkdir()
    return outside, tmp_path / "work" / "dest"


def _state(root: Path) -> dict[str, tuple]:
    """Every path under root (root too): type+mode, mtime in ns, bytes of regular files, link targets."""
    out = {}
    for path in [root, *sorted(root.rglob("*"))]:
        st = os.lstat(path)
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        link = os.readlink(path) if path.is_symlink() else None
        out[str(path.relative_to(root))] = (st.st_mode, st.st_mtime_ns, data, link)
    return out


def _tar(path: Path, members: list[tuple], fmt=tarfile.GNU_FORMAT) -> Path:
    """members: (name, kind, payload-or-linkname[, pax headers]); kinds file, dir, sym, hard."""
    with tarfile.open(path, "w", format=fmt) as tf:
        for name, kind, arg, *pax in members:
            info = tarfile.TarInfo(name)
            info.mtime = 1_600_000_000
            if pax:
                info.pax_headers = pax[0]
            if kind == "file":
                info.size, info.mode = len(arg), 0o755
                tf.addfile(info, io.BytesIO(arg))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE}[kind]
            info.mode = 0o755
            if kind in ("sym", "hard"):
                info.linkname = arg
            tf.addfile(info)
    return path


# a/b/up -> ../.. is the tree's top; "a/b/up/../../outside/..." looks inside lexically (it normalizes to
# a/outside/...) but the kernel resolves it from the top upward: work/, then tmp_path/, then outside/.
CLIMB = [("a/", "dir", None), ("a/b/", "dir", None), ("a/b/up", "sym", "../..")]

HOSTILE = {
    # The mode of outside/canary.txt went 0600 -> 0755 on the main of issue 11 (os.chmod followed g).
    "file-then-climbing-link-then-hardlink": CLIMB + [
        ("f", "file", b"payload"), ("f", "sym", "a/b/up/../../outside/canary.txt"), ("g", "hard", "f")],
    # outside/cdir's mtime changed on the main of issue 11 (os.utime followed the link).
    "dir-member-named-like-escaping-link": CLIMB + [
        ("esc", "sym", "a/b/up/../../outside/cdir"), ("esc/", "dir", None)],
    "nested-dir-under-escaping-link": CLIMB + [
        ("esc", "sym", "a/b/up/../../outside/cdir"), ("esc/new/", "dir", None)],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archive_is_refused_and_nothing_outside_changes(tmp_path, case):
    outside, dest = _sandbox(tmp_path)
    archive = _tar(tmp_path / f"{case}.tar", HOSTILE[case])
    before, around = _state(outside), sorted(os.listdir(dest.parent))
    with pytest.raises(ToolkitError) as err:
        extract_archive(archive, dest, strip_components=0)
    assert str(archive) in str(err.value) and "refused" in str(err.value)
    assert _state(outside) == before
    assert sorted(os.listdir(dest.parent)) == around  # no dest, no temporary folder left


# A later member replacing an escaping link replaces the link itself (never what it points to).
REPLACING = {
    "file-member-over-escaping-link": CLIMB + [
        ("esc", "sym", "a/b/up/../../outside/canary.txt"), ("esc", "file", b"overwritten")],
    "hardlink-over-escaping-link": CLIMB + [
        ("src", "file", b"overwritten"), ("esc", "sym", "a/b/up/../../outside/canary.txt"), ("esc", "hard", "src")],
}


@pytest.mark.parametrize("case", sorted(REPLACING))
def test_member_replacing_an_escaping_link_replaces_the_link(tmp_path, case):
    outside, dest = _sandbox(tmp_path)
    before = _state(outside)
    extract_archive(_tar(tmp_path / f"{case}.tar", REPLACING[case]), dest, strip_components=0)
    assert not (dest / "esc").is_symlink() and (dest / "esc").read_bytes() == b"overwritten"
    assert _state(outside) == before


def test_pax_name_with_nul_is_a_clear_refusal(tmp_path):
    outside, dest = _sandbox(tmp_path)
    archive = _tar(tmp_path / "nul.tar", [("ok.txt", "file", b"ok"),
                                         ("x", "file", b"evil", {"path": "ev\x00il.txt"})], tarfile.PAX_FORMAT)
    before = _state(outside)
    with pytest.raises(ToolkitError) as err:
        extract_archive(archive, dest)
    message = str(err.value)
    assert str(archive) in message and "'ev\\x00il.txt'" in message and "NUL" in message
    assert _state(outside) == before and not dest.exists()


def test_cli_fetch_of_a_nul_name_archive_is_an_error_line_not_a_traceback(tmp_path):
    import hashlib

    from tests.support.http import FaultServer

    archive = _tar(tmp_path / "nul.tar", [("x", "file", b"evil", {"path": "ev\x00il.txt"})], tarfile.PAX_FORMAT)
    server = FaultServer()
    try:
        url = server.add("/nul.tar", archive.read_bytes())
        env = dict(os.environ, TOOLKIT_CACHE_DIR=str(tmp_path / "cache"))
        proc = subprocess.run([sys.executable, "-m", "toolkit", "fetch", url, "--dest", str(tmp_path / "dest"),
                               "--sha256", hashlib.sha256(archive.read_bytes()).hexdigest()],
                              env=env, capture_output=True, text=True)
    finally:
        server.stop()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "\nerror: " in proc.stderr and "nul.tar: refused to extract" in proc.stderr
    assert "'ev\\x00il.txt' has a NUL byte" in proc.stderr
    assert not (tmp_path / "dest").exists()


def test_pax_linkname_with_nul_is_a_clear_refusal(tmp_path):
    _, dest = _sandbox(tmp_path)
    archive = _tar(tmp_path / "nul-link.tar", [("ok.txt", "file", b"ok"),
                                              ("lnk", "sym", "ok.txt", {"linkpath": "ok\x00.txt"})],
                   tarfile.PAX_FORMAT)
    with pytest.raises(ToolkitError) as err:
        extract_archive(archive, dest)
    assert str(archive) in str(err.value) and "'lnk'" in str(err.value) and "NUL" in str(err.value)


def test_good_archive_still_unpacks_with_modes_and_mtimes(tmp_path):
    outside, dest = _sandbox(tmp_path)
    archive = _tar(tmp_path / "good.tar", CLIMB + [("f", "file", b"data"), ("g", "hard", "f"),
                                                   ("d/", "dir", None), ("d/x.sh", "file", b"#!/bin/sh\n"),
                                                   ("lnk", "sym", "d/x.sh")])
    before = _state(outside)
    extract_archive(archive, dest, strip_components=0)
    assert (dest / "g").read_bytes() == b"data" and os.readlink(dest / "lnk") == "d/x.sh"
    assert os.stat(dest / "d/x.sh").st_mode & 0o777 == 0o755
    assert os.stat(dest / "d").st_mtime == 1_600_000_000
    assert _state(outside) == before


def _big_archive(path: Path) -> Path:
    """A small .tar.gz that unpacks to 200 MB of zeros: long enough to kill the extraction midway."""
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        info = tarfile.TarInfo("top/zeros.bin")
        info.size = 200 << 20

        class Zeros(io.RawIOBase):
            left = info.size

            def readable(self):
                return True

            def readinto(self, buf):
                n = min(len(buf), self.left)
                buf[:n] = bytes(n)
                self.left -= n
                return n

        tf.addfile(info, io.BufferedReader(Zeros(), 1 << 20))
    return path


def test_leftover_of_a_killed_extraction_is_cleaned_on_the_next_run(tmp_path):
    dest = tmp_path / "work" / "dest"
    dest.parent.mkdir(parents=True)
    big = _big_archive(tmp_path / "big.tar.gz")
    child = subprocess.Popen([sys.executable, "-c", "import sys; from toolkit.sources.extract import "
                              "extract_archive; extract_archive(sys.argv[1], sys.argv[2])", str(big), str(dest)])
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.endswith(".extract") for p in dest.parent.iterdir()):
            assert child.poll() is None and time.monotonic() < deadline, "the extraction never started"
            time.sleep(0.001)
        time.sleep(0.1)  # let it write a part of the file
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    leftovers = [p for p in dest.parent.iterdir() if p.name.endswith(".extract")]
    assert leftovers and not dest.exists()
    small = _tar(tmp_path / "small.tar", [("top/", "dir", None), ("top/ok.txt", "file", b"ok")])
    extract_archive(small, dest)
    assert sorted(os.listdir(dest.parent)) == ["dest"]
    assert (dest / "ok.txt").read_bytes() == b"ok"


def test_a_live_extraction_folder_is_not_taken_as_leftover(tmp_path):
    """A folder of a process that is still running (another build unpacking beside this one) stays."""
    dest = tmp_path / "dest"
    live = tmp_path / f".dest.{os.getppid()}.abc123.extract"
    live.mkdir()
    extract_archive(_tar(tmp_path / "small.tar", [("ok.txt", "file", b"ok")]), dest)
    assert live.is_dir()
