"""`python -m toolkit lock` as a new user meets it: --recipe like every other command, plain messages when
there is nothing to pin, and a way to pin a `--source URL`. Real HTTP server on 127.0.0.1, real subprocesses."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.support.http import tiny_tarball
from toolkit.recipe.load import PROJECT_ROOT
from toolkit.recipe.sources import source_from_argument
from toolkit.sources.cache import Cache
from toolkit.sources.context import FetchContext
from toolkit.sources.download import DownloadOptions
from toolkit.util import log

FAST = DownloadOptions(connect_timeout=2, read_timeout=2, retries=0, progress=False)


def _lock(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TOOLKIT_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-m", "toolkit", "lock", *args], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True)


def test_plain_lock_takes_the_sample_recipe_and_says_nothing_to_pin(tmp_path):
    lock_file = PROJECT_ROOT / "recipes" / "amdgpu-ep.lock.toml"
    existed = lock_file.exists()
    proc = _lock(tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    assert "nothing to pin" in out and "amdgpu-ep.toml" in out
    assert lock_file.exists() == existed  # no empty lock file written for the sample


def test_recipe_by_name_and_by_path(tmp_path):
    by_name = _lock(tmp_path, "--recipe", "amdgpu-ep")
    assert by_name.returncode == 0 and "nothing to pin" in by_name.stdout + by_name.stderr
    recipe = tmp_path / "local.toml"
    recipe.write_text(f'[recipe]\nname = "local"\n[source]\npath = "{tmp_path}"\n')
    by_path = _lock(tmp_path, "--recipe", str(recipe))
    assert by_path.returncode == 0, by_path.stderr
    assert "nothing to pin" in by_path.stdout + by_path.stderr and str(recipe) in by_path.stdout + by_path.stderr
    assert not (tmp_path / "local.lock.toml").exists()
    missing = _lock(tmp_path, "--recipe", "no-such-recipe")
    assert missing.returncode == 2 and "error: no recipe named 'no-such-recipe'" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_recipe_with_an_unpinned_url_is_pinned(server, tmp_path):
    data = tiny_tarball()
    url = server.add("/t-1.tar.gz", data)
    recipe = tmp_path / "net.toml"
    recipe.write_text(f'[recipe]\nname = "net"\n[source]\nurl = "{url}"\n')
    proc = _lock(tmp_path, "--recipe", str(recipe))
    assert proc.returncode == 0, proc.stderr
    assert f"pinned {hashlib.sha256(data).hexdigest()}  {url}" in proc.stdout
    assert url in (tmp_path / "net.lock.toml").read_text()
    again = _lock(tmp_path, "--recipe", str(recipe))
    assert again.returncode == 0 and "nothing new to pin" in again.stdout + again.stderr


def test_source_url_without_sha256_is_pinned_on_the_command_line(server, tmp_path):
    data = tiny_tarball()
    url = server.add("/t-1.tar.gz", data)
    proc = _lock(tmp_path, "--source", url)
    assert proc.returncode == 0, proc.stderr
    pinned = f"{url}#sha256={hashlib.sha256(data).hexdigest()}"
    assert proc.stdout.strip().splitlines()[-1] == pinned
    assert f"--source '{pinned}'" in proc.stderr
    # What it printed is a valid, pinned --source value.
    settings = source_from_argument(pinned)
    assert settings.url == url and settings.sha256 == hashlib.sha256(data).hexdigest()
    already = _lock(tmp_path, "--source", pinned)
    assert already.returncode == 0 and "nothing to pin" in already.stdout + already.stderr
    assert server.hits["/t-1.tar.gz"] == 1


def test_unpinned_source_warning_says_exactly_how_to_pin(server, tmp_path, capfd):
    data = tiny_tarball()
    url = server.add("/t-1.tar.gz", data)
    log.set_quiet(False)
    FetchContext(Cache(tmp_path / "cache"), options=FAST).fetch_url(url, None, "source")
    err = capfd.readouterr().err
    assert f"--source '{url}#sha256={hashlib.sha256(data).hexdigest()}'" in err
