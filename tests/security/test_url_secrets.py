"""URLs with credentials: redacted wherever they are printed or written; never taken from a recipe or a lock
key. Mirrors: a file:// mirror must exist; a plain-http mirror serves no https:// URL unless
--insecure-mirror; `lock` names where each pin came from; a dry run names where each input would come from;
`lock --offline` downloads nothing and says nothing about downloading. Real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.http import tiny_tarball
from tests.support.injection import toolkit_here
from tests.support.tools import ROOT, one_error_line
from toolkit.sources.cache import Cache
from toolkit.sources.download import DownloadOptions, fetch_unpinned
from toolkit.util.errors import ToolkitError
from toolkit.util.redact import public_url, redact_text, redact_url

TOKEN = "s3cr3t-canary-91ab"
FAST = DownloadOptions(connect_timeout=2, read_timeout=2, retries=0, progress=True)


def _toolkit(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"), "CI_JOB_TOKEN": TOKEN, **env}
    full.pop("TOOLKIT_MIRRORS", None)
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=300)


def _no_token(tmp_path: Path, proc: subprocess.CompletedProcess, inputs: tuple[Path, ...] = ()) -> None:
    """Not in the output, nor in any file under tmp_path but the test's own inputs (a hostile recipe)."""
    assert TOKEN not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file() and not path.is_symlink() and path not in inputs:
            assert TOKEN.encode() not in path.read_bytes(), path


def test_the_redaction_helper():
    url = f"https://bot:{TOKEN}@host.example/a/b.tar.gz?v=1&private_token={TOKEN}&X-Amz-Signature={TOKEN}"
    assert redact_url(url) == "https://***@host.example/a/b.tar.gz?v=1&private_token=***&X-Amz-Signature=***"
    assert public_url(url) == "https://host.example/a/b.tar.gz?v=1&private_token=***&X-Amz-Signature=***"
    text = f"failed: git+https://{TOKEN}@github.com/x and http://u:{TOKEN}@h/y?access_token={TOKEN}&page=2"
    assert TOKEN not in redact_text(text) and "page=2" in redact_text(text)
    assert redact_url("https://host/plain?page=2") == "https://host/plain?page=2"
    for untouched in ("file:///tmp/a@b/x.tar.gz", "https://host/x?author=me&keyword=y", "git@github.com:o/r.git",
                      "-DCMAKE_PREFIX_PATH=/a;/b"):
        assert redact_text(untouched) == untouched


@pytest.mark.parametrize("url", [f"https://bot:{TOKEN}@host.example/x.tar.gz",
                                 f"https://host.example/x.tar.gz?private_token={TOKEN}"])
def test_a_recipe_url_with_a_credential_is_refused_without_echoing_it(tmp_path, url):
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'[recipe]\nname = "r"\n\n[source]\nurl = "{url}"\n')
    for args in (("lock", "--recipe", str(recipe)), ("build", "--recipe", str(recipe), "--dry-run")):
        proc = _toolkit(tmp_path, *args)
        one_error_line(proc, "key 'source.url'", "carries a credential", "~/.netrc")
        _no_token(tmp_path, proc, inputs=(recipe,))


def test_a_lock_key_with_a_credential_is_refused_without_echoing_it(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text('[recipe]\nname = "r"\n\n[source]\nurl = "https://host.example/x.tar.gz"\n')
    lock = tmp_path / "r.lock.toml"
    lock.write_text(f'version = 1\n\n[sha256]\n"https://bot:{TOKEN}@host.example/x.tar.gz" = "{"a" * 64}"\n')
    proc = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--dry-run")
    assert proc.returncode == 2 and "a lock key holds no credential" in proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr


def test_lock_source_with_userinfo_prints_and_keeps_no_credential(tmp_path, server):
    data = tiny_tarball()
    url = server.add("/dl/t-1.tar.gz", data).replace("http://", f"http://bot:{TOKEN}@")
    proc = _toolkit(tmp_path, "lock", "--source", url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{server.url('/dl/t-1.tar.gz')}#sha256={hashlib.sha256(data).hexdigest()}"
    assert "done: http://***@127.0.0.1:" in proc.stderr      # the download's one line (it is small), redacted
    _no_token(tmp_path, proc)


def test_download_failed_errors_redact_every_location(tmp_path, server):
    base = server.url("").replace("http://", f"http://bot:{TOKEN}@")
    proc = _toolkit(tmp_path, "fetch", f"{base}/nothing.bin", "--sha256", "0" * 64, "--dest", str(tmp_path / "d"),
                    "--mirror", f"{base}/mirror")
    assert proc.returncode == 2 and "download failed: http://***@127.0.0.1" in proc.stderr
    assert "http://***@127.0.0.1" in proc.stderr and "HTTP 404" in proc.stderr
    _no_token(tmp_path, proc)


def test_a_plain_http_mirror_does_not_serve_an_https_url(tmp_path, server, monkeypatch, capsys):
    """What a plain-http mirror sends could be changed on the way; an https URL's pin must not come from it."""
    data = tiny_tarball()
    server.add("/m/upstream.invalid/x.tar.gz", data)
    cache = Cache(tmp_path / "cache")
    monkeypatch.delenv("TOOLKIT_INSECURE_MIRROR", raising=False)
    with pytest.raises(ToolkitError) as err:
        fetch_unpinned("https://upstream.invalid/x.tar.gz", cache, [server.url("/m")], FAST)
    assert server.hits["/m/upstream.invalid/x.tar.gz"] == 0
    assert "download failed: https://upstream.invalid/x.tar.gz" in str(err.value)
    assert "is plain http: not used for https:// URLs" in capsys.readouterr().err
    monkeypatch.setenv("TOOLKIT_INSECURE_MIRROR", "1")   # what --insecure-mirror sets
    path, digest = fetch_unpinned("https://upstream.invalid/x.tar.gz", cache, [server.url("/m")], FAST)
    assert path.read_bytes() == data and server.hits["/m/upstream.invalid/x.tar.gz"] == 1


def test_lock_names_the_mirror_each_pin_came_from(tmp_path, server):
    data = tiny_tarball()
    server.add("/m/upstream.invalid/x.tar.gz", data)
    recipe = tmp_path / "recipes" / "r.toml"
    recipe.parent.mkdir()
    recipe.write_text('[recipe]\nname = "r"\n\n[source]\nurl = "https://upstream.invalid/x.tar.gz"\n')
    mirror = server.url("/m").replace("http://", f"http://bot:{TOKEN}@")
    proc = _toolkit(tmp_path, "lock", "--recipe", str(recipe), "--mirror", mirror, "--insecure-mirror")
    assert proc.returncode == 0, proc.stderr
    sha = hashlib.sha256(data).hexdigest()
    assert (f"pinned {sha}  https://upstream.invalid/x.tar.gz  (from mirror {server.url('/m')}"
            .replace("http://", "http://***@")) in proc.stdout
    assert "serves https:// URLs over plain http (--insecure-mirror)" in proc.stderr
    lock = (tmp_path / "recipes" / "r.lock.toml").read_text()
    assert f'"https://upstream.invalid/x.tar.gz" = "{sha}"' in lock
    _no_token(tmp_path, proc)


def test_a_file_mirror_that_does_not_exist_is_an_error(tmp_path):
    missing = f"file://{tmp_path}/mirrr"
    proc = _toolkit(tmp_path, "lock", "--mirror", missing, "--offline")
    one_error_line(proc, f"mirror {missing}: no such folder {tmp_path}/mirrr")
    recipe = tmp_path / "r.toml"
    recipe.write_text('[recipe]\nname = "r"\n\n[source]\nurl = "https://upstream.invalid/x.tar.gz"\n')
    proc = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--dry-run", "--mirror", missing)
    one_error_line(proc, f"mirror {missing}: no such folder")
    out = toolkit_here(tmp_path, "build", "--recipe", str(recipe), "--dry-run", "--mirror", "ftp://x/y")
    out.assert_refused("mirror ftp://x/y: expected an http://, https:// or file:// base URL")


def test_a_dry_run_says_where_each_input_would_come_from(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text('[recipe]\nname = "r"\n\n[source]\nurl = "https://upstream.invalid/x.tar.gz"\n')
    upstream = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--dry-run")
    assert "[UNPINNED, from upstream https://upstream.invalid/x.tar.gz]" in upstream.stdout + upstream.stderr
    mirror = tmp_path / "mirror"
    (mirror / "upstream.invalid").mkdir(parents=True)
    (mirror / "upstream.invalid" / "x.tar.gz").write_bytes(tiny_tarball())
    local = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--dry-run", "--mirror", f"file://{mirror}")
    assert f"[UNPINNED, from mirror file://{mirror}]" in local.stdout + local.stderr
    offline = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--dry-run", "--offline")
    assert "not in the cache nor a local mirror: offline cannot get it" in offline.stdout + offline.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.tar.gz"))


def test_lock_offline_downloads_nothing_and_says_nothing_about_downloading(tmp_path, server):
    recipe = tmp_path / "r.toml"
    recipe.write_text('[recipe]\nname = "r"\n\n[[fetchcontent]]\nname = "dep"\n'
                      f'url = "{server.url("/dep-1.tar.gz")}"\n')
    server.add("/dep-1.tar.gz", tiny_tarball())
    proc = _toolkit(tmp_path, "lock", "--recipe", str(recipe), "--offline")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "downloading" not in out and server.hits["/dep-1.tar.gz"] == 0
    assert "left unpinned" in out and "no file:// mirror holds it" in out
    mirror = tmp_path / "mirror" / "127.0.0.1" / "dep-1.tar.gz"
    mirror.parent.mkdir(parents=True)
    mirror.write_bytes(tiny_tarball())
    proc = _toolkit(tmp_path, "lock", "--recipe", str(recipe), "--offline", "--mirror", f"file://{tmp_path}/mirror")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "downloading" not in out and server.hits["/dep-1.tar.gz"] == 0
    assert f"digesting the content of {server.url('/dep-1.tar.gz')} (from mirror file://{tmp_path}/mirror)" in out
    assert f"(from mirror file://{tmp_path}/mirror)" in proc.stdout


def test_build_takes_insecure_mirror_too(tmp_path):
    """The dry run says which mirror would serve the https source: the http one only with --insecure-mirror."""
    recipe = tmp_path / "r.toml"
    recipe.write_text('[recipe]\nname = "r"\n\n[source]\nurl = "https://upstream.invalid/x.tar.gz"\n')
    plain = "http://127.0.0.1:9/m"
    refused = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--dry-run", "--mirror", plain)
    assert "[UNPINNED, from upstream https://upstream.invalid/x.tar.gz]" in refused.stdout + refused.stderr
    assert "is plain http: not used for https:// URLs" in refused.stderr
    allowed = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--dry-run", "--mirror", plain,
                       "--insecure-mirror")
    assert f"[UNPINNED, from mirror {plain} (else the next mirror or upstream)]" in allowed.stdout + allowed.stderr
