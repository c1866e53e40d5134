"""Downloads against a real HTTP server on 127.0.0.1 that injects faults.

Every good download must succeed, every bad one must fail naming the URL and the reason, and nothing
corrupt may be left in the cache (downloads/ holds only verified files) or the destination.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.sources.cache import Cache
from toolkit.sources.download import DownloadOptions, candidate_urls, fetch, fetch_unpinned, mirror_url
from toolkit.util.errors import ToolkitError

DATA = os.urandom(200_000)
SHA = hashlib.sha256(DATA).hexdigest()
FAST = DownloadOptions(connect_timeout=2, read_timeout=0.5, retries=2, backoff=0.01, progress=False)


@pytest.fixture
def cache(tmp_path):
    return Cache(tmp_path / "cache")


def assert_cache_clean(cache: Cache) -> None:
    """downloads/ may only hold files whose content matches the checksum folder they sit in."""
    downloads = cache.root / "downloads"
    if not downloads.exists():
        return
    for folder in downloads.iterdir():
        for f in folder.iterdir():
            assert hashlib.sha256(f.read_bytes()).hexdigest() == folder.name, f"corrupt cache entry {f}"


def downloads_of(cache: Cache) -> list[Path]:
    root = cache.root / "downloads"
    return sorted(root.rglob("*")) if root.exists() else []


def test_good_download_is_cached_and_reused(server, cache):
    url = server.add("/pkg/a.tar.gz", DATA)
    path = fetch(url, SHA, cache, options=FAST)
    assert path.read_bytes() == DATA
    assert path == cache.root / "downloads" / SHA / "a.tar.gz"
    assert fetch(url, SHA, cache, options=FAST) == path
    assert server.hits["/pkg/a.tar.gz"] == 1
    assert_cache_clean(cache)


def test_two_500s_then_success(server, cache):
    url = server.add("/flaky.bin", DATA, fault="fail500", times=2)
    assert fetch(url, SHA, cache, options=FAST).read_bytes() == DATA
    assert server.hits["/flaky.bin"] == 3


def test_persistent_500_fails_naming_url_and_status(server, cache):
    url = server.add("/broken.bin", DATA, fault="fail500")
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, options=FAST)
    text = str(err.value)
    assert url in text and "HTTP 500" in text and "gave up after 3 attempts" in text
    assert server.hits["/broken.bin"] == 3
    assert downloads_of(cache) == []


def test_dropped_connection_resumes_with_range(server, cache):
    url = server.add("/drop.bin", DATA, fault="drop", times=1)
    assert fetch(url, SHA, cache, options=FAST).read_bytes() == DATA
    assert server.ranges["/drop.bin"] == [None, f"bytes={len(DATA) // 2}-"]
    assert_cache_clean(cache)


def test_always_dropped_fails_and_keeps_nothing_verified(server, cache):
    url = server.add("/drop-always.bin", DATA, fault="drop")
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, options=FAST)
    assert url in str(err.value)
    assert f"truncated body: connection closed after {len(DATA) // 2} of" in str(err.value)
    assert downloads_of(cache) == []


def test_content_length_longer_than_body_fails(server, cache):
    url = server.add("/short.bin", DATA, fault="short")
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, options=FAST)
    text = str(err.value)
    assert url in text and "truncated body" in text and f"of {len(DATA) + 100} bytes" in text
    assert downloads_of(cache) == []


def test_stalled_body_trips_read_timeout(server, cache):
    url = server.add("/stall.bin", DATA, fault="stall", delay=1.5)
    options = DownloadOptions(connect_timeout=2, read_timeout=0.3, retries=1, backoff=0.01, progress=False)
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, options=options)
    text = str(err.value)
    assert url in text and "read timeout of 0.3 s" in text
    assert downloads_of(cache) == []


def test_stall_once_then_success(server, cache):
    url = server.add("/stall-once.bin", DATA, fault="stall", delay=1.0, times=1)
    assert fetch(url, SHA, cache, options=FAST).read_bytes() == DATA


def test_wrong_checksum_fails_and_discards(server, cache):
    url = server.add("/evil.bin", DATA[:-1] + b"X")
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, options=FAST)
    text = str(err.value)
    assert url in text and f"sha256 mismatch: expected {SHA}" in text
    assert downloads_of(cache) == []
    assert list((cache.root / "partial").glob("*")) == []


def test_redirects_are_followed(server, cache):
    server.add("/real/file.bin", DATA)
    server.add("/hop2", fault="redirect", status=302, location="/real/file.bin")
    url = server.add("/hop1/file.bin", fault="redirect", status=301, location=server.url("/hop2"))
    path = fetch(url, SHA, cache, options=FAST)
    assert path.read_bytes() == DATA and path.name == "file.bin"


def test_redirect_loop_fails(server, cache):
    url = server.add("/loop", fault="redirect", status=302, location="/loop")
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, options=FAST)
    assert url in str(err.value) and "too many redirects" in str(err.value)


def test_404_is_not_retried(server, cache):
    url = server.url("/missing.bin")
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, options=FAST)
    assert url in str(err.value) and "HTTP 404" in str(err.value)
    assert server.hits["/missing.bin"] == 1


def test_mirrors_are_tried_in_order_before_upstream(server, cache, monkeypatch):
    monkeypatch.setenv("TOOLKIT_INSECURE_MIRROR", "1")   # the test server is plain http
    upstream = "https://github.com/org/dep/archive/v1.tar.gz"
    first, second = server.url("/m1"), server.url("/m2")
    assert mirror_url(first, upstream) == server.url("/m1/github.com/org/dep/archive/v1.tar.gz")
    assert candidate_urls(upstream, [first, second])[-1] == upstream
    server.add("/m2/github.com/org/dep/archive/v1.tar.gz", DATA)
    path = fetch(upstream, SHA, cache, mirrors=[first, second], options=FAST)
    assert path.read_bytes() == DATA and path.name == "v1.tar.gz"
    assert server.hits["/m1/github.com/org/dep/archive/v1.tar.gz"] == 1


def test_bad_mirror_falls_back_to_next(server, cache):
    upstream = server.add("/up/file.bin", DATA)
    server.add("/bad/127.0.0.1/up/file.bin", b"tampered")
    path = fetch(upstream, SHA, cache, mirrors=[server.url("/bad")], options=FAST)
    assert path.read_bytes() == DATA
    assert server.hits["/up/file.bin"] == 1


def test_offline_uses_cache_and_names_what_is_missing(server, cache):
    url = server.add("/off.bin", DATA)
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, offline=True, options=FAST)
    assert "offline" in str(err.value) and url in str(err.value) and SHA in str(err.value)
    assert server.hits["/off.bin"] == 0
    fetch(url, SHA, cache, options=FAST)
    server.stop()
    server.stop = lambda: None
    assert fetch(url, SHA, cache, offline=True, options=FAST).read_bytes() == DATA


def test_interrupted_download_resumes_on_the_next_run(server, cache):
    url = server.add("/resume.bin", DATA, fault="drop", times=1)
    once = DownloadOptions(connect_timeout=2, read_timeout=0.5, retries=0, progress=False)
    with pytest.raises(ToolkitError):
        fetch(url, SHA, cache, options=once)
    kept = cache.partial_path(SHA).stat().st_size
    assert kept == len(DATA) // 2
    assert downloads_of(cache) == []
    assert fetch(url, SHA, cache, options=once).read_bytes() == DATA
    assert server.ranges["/resume.bin"][-1] == f"bytes={kept}-"


def test_unpinned_fetch_returns_checksum(server, cache):
    url = server.add("/new.tar.gz", DATA)
    path, digest = fetch_unpinned(url, cache, options=FAST)
    assert digest == SHA and path.read_bytes() == DATA
    assert fetch(url, SHA, cache, options=FAST) == path
    assert server.hits["/new.tar.gz"] == 1


def _fetch_in_child(url: str, sha: str, cache_root: str, queue) -> None:
    options = DownloadOptions(connect_timeout=5, read_timeout=10, retries=0, progress=False)
    path = fetch(url, sha, Cache(Path(cache_root)), options=options)
    queue.put(str(path))


def test_206_whose_body_restarts_at_zero_starts_over_in_the_same_run(server, cache):
    url = server.add("/restart.bin", DATA, fault="restart206", times=2)
    assert fetch(url, SHA, cache, options=FAST).read_bytes() == DATA
    # dropped at half, resumed with a Range the server answered wrongly, then one plain download from zero
    assert server.ranges["/restart.bin"] == [None, f"bytes={len(DATA) // 2}-", None]
    assert_cache_clean(cache)
    assert list((cache.root / "partial").glob("*")) == []


def test_206_that_is_always_wrong_fails_without_resuming_again(server, cache):
    """From zero, a second drop does not resume through the broken ranges: it starts over each time."""
    url = server.add("/restart-always.bin", DATA, fault="restart206")
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, options=FAST)
    assert url in str(err.value)
    assert server.ranges["/restart-always.bin"][:3] == [None, f"bytes={len(DATA) // 2}-", None]
    assert all(r is None for r in server.ranges["/restart-always.bin"][2:])
    assert downloads_of(cache) == []


def _flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    mode = path.stat().st_mode
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))
    os.chmod(path, mode)


def test_corrupt_cache_entry_is_reported_dropped_and_fetched_again(server, cache, capfd):
    url = server.add("/cached.bin", DATA)
    path = fetch(url, SHA, cache, options=FAST)
    _flip_one_byte(path)
    again = fetch(url, SHA, cache, options=FAST)
    assert again.read_bytes() == DATA
    assert server.hits["/cached.bin"] == 2
    err = capfd.readouterr().err
    assert str(path) in err and "corrupt" in err and "downloading it again" in err
    assert_cache_clean(cache)


def test_corrupt_cache_entry_offline_is_an_error_naming_it(server, cache):
    url = server.add("/cached-off.bin", DATA)
    path = fetch(url, SHA, cache, options=FAST)
    _flip_one_byte(path)
    with pytest.raises(ToolkitError) as err:
        fetch(url, SHA, cache, offline=True, options=FAST)
    assert str(path) in str(err.value) and "corrupt" in str(err.value) and "offline" in str(err.value)
    assert not path.exists() and server.hits["/cached-off.bin"] == 1


def test_cli_fetch_never_copies_a_corrupt_cache_entry(server, tmp_path):
    url = server.add("/tool.bin", DATA)
    env = dict(os.environ, TOOLKIT_CACHE_DIR=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "toolkit", "fetch", url, "--sha256", SHA, "--dest"]
    assert subprocess.run(cmd + [str(tmp_path / "d1")], env=env, capture_output=True).returncode == 0
    _flip_one_byte(Cache(tmp_path / "cache").download_path(SHA, url))
    proc = subprocess.run(cmd + [str(tmp_path / "d2")], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "corrupt" in proc.stderr
    assert (tmp_path / "d2" / "tool.bin").read_bytes() == DATA


def test_two_processes_download_once(server, cache):
    url = server.add("/shared.bin", DATA, fault="delay", delay=0.4)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_fetch_in_child, args=(url, SHA, str(cache.root), queue)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    paths = {queue.get(timeout=5), queue.get(timeout=5)}
    assert len(paths) == 1 and Path(paths.pop()).read_bytes() == DATA
    assert server.hits["/shared.bin"] == 1


def test_cli_fetch_unpacks_and_refuses_bad_checksum(server, tmp_path):
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("dep-1.0/CMakeLists.txt")
        payload = b"project(dep)\n"
        info.size = len(payload)
        tf.addfile(info, io.BytesIO(payload))
    archive = buf.getvalue()
    url = server.add("/dep-1.0.tar.gz", archive)
    env = dict(os.environ, TOOLKIT_CACHE_DIR=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "toolkit", "fetch", url, "--dest", str(tmp_path / "dest")]
    ok = subprocess.run(cmd + ["--sha256", hashlib.sha256(archive).hexdigest()], env=env, capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "dest" / "CMakeLists.txt").read_bytes() == b"project(dep)\n"
    bad = subprocess.run(cmd[:-1] + [str(tmp_path / "dest2"), "--sha256", "0" * 64], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert url in bad.stderr and "sha256 mismatch" in bad.stderr
    assert not (tmp_path / "dest2").exists()
