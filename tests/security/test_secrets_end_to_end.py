"""A real sample build and release with credentials in the mirror and source URLs: the token reaches the HTTPS
server (it wants basic auth) and nothing else. Every line printed, every file written (logs, build records,
stamps, the lock, SBOM, provenance, the wheels' members, the cache) is scanned for it: zero hits. The process
environment carries the same token, as CI's does, so a dumped environment would be caught too.

The server is a real TLS server on 127.0.0.1 (openssl's self-signed certificate, trusted via
REQUESTS_CA_BUNDLE); the build is the real sample through cmake, ninja and hipcc; the release is one entry."""

from __future__ import annotations

import hashlib
import io
import os
import secrets
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.security.tls_server import AuthServer
from tests.support.tools import ROOT, need
from toolkit.util.cachedir import default_cache_dir

USER = "ci-bot"
ORT_DEB = "521b439b4674dbd71da1d0bc3016f29075c6ad572f4a1c13beb011dee893f8f3"   # recipes/amdgpu-ep.toml's


def _tarball(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                tar.add(path, arcname=f"umbrella-ep/{path.relative_to(folder).as_posix()}")
    return buf.getvalue()


def _hits(root: Path, token: bytes) -> list[str]:
    """Every file under root holding the token, wheels' and other zips' members included."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if token in data:
            found.append(str(path))
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as archive:
                found += [f"{path}!{m}" for m in archive.namelist() if token in archive.read(m)]
    return found


@pytest.fixture
def server(tmp_path):
    token = f"tok-{secrets.token_hex(12)}"
    s = AuthServer(tmp_path / "tls", USER, token)
    yield s, token
    s.stop()


def test_no_credential_of_a_mirror_or_source_url_reaches_output_or_files(tmp_path, server):
    need("hipcc", "hipcc libamdhip64-dev rocm-device-libs")
    srv, token = server
    tarball = _tarball(ROOT / "samples" / "umbrella-ep")
    sha = hashlib.sha256(tarball).hexdigest()
    srv.files["/src/umbrella-ep.tar.gz"] = tarball
    mirror = f"{srv.base(f'{USER}:{token}')}/mirror"            # holds nothing: each file falls back to upstream
    source = f"{srv.base(f'{USER}:{token}')}/src/umbrella-ep.tar.gz"
    cache = tmp_path / "cache"
    seed = default_cache_dir() / "downloads" / ORT_DEB   # ORT's headers, verified again by sha256 when used
    if seed.is_dir():
        shutil.copytree(seed, cache / "downloads" / ORT_DEB)
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login {USER} password {token}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(cache), "NETRC": str(netrc),
           "REQUESTS_CA_BUNDLE": str(srv.cert), "TOOLKIT_BUILD_DIR": str(tmp_path / "build"),
           "CI_JOB_TOKEN": token, "TOOLKIT_MIRRORS": mirror}
    recipe_dir = tmp_path / "recipes"
    recipe_dir.mkdir()
    (recipe_dir / "plain.toml").write_text(   # a recipe names no credential: ~/.netrc (NETRC here) gives it
        f'[recipe]\nname = "plain"\n\n[source]\nurl = "{srv.base()}/src/umbrella-ep.tar.gz"\n')
    project_before = _project_state()

    def toolkit(*args: str, rc: int = 0) -> str:
        proc = subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == rc, (args, proc.stdout[-3000:], proc.stderr[-3000:])
        return proc.stdout + proc.stderr

    out = toolkit("lock", "--recipe", str(recipe_dir / "plain.toml"), "-v")
    assert f"pinned {sha}  {srv.base()}/src/umbrella-ep.tar.gz  (from upstream)" in out
    out += toolkit("lock", "--source", source, "--mirror", mirror)
    assert f"{srv.base()}/src/umbrella-ep.tar.gz#sha256={sha}" in out
    out += toolkit("build", "--source", f"{source}#sha256={sha}", "--mirror", mirror, "--dry-run")
    out += toolkit("build", "--source", f"{source}#sha256={sha}", "--mirror", mirror, "-v")
    out += toolkit("release", "--only", "cp311-cdna", "--out", str(tmp_path / "dist"),
                   "--source", f"{source}#sha256={sha}", "--mirror", mirror)
    # A download that fails everywhere names every location tried.
    out += toolkit("fetch", f"{source}.missing", "--sha256", "0" * 64, "--dest", str(tmp_path / "f"),
                   "--mirror", mirror, rc=2)
    assert "download failed: https://***@127.0.0.1:" in out and "HTTP 404" in out

    assert srv.hits["/src/umbrella-ep.tar.gz"] >= 2 and srv.refused == 0   # the token did reach the server
    assert sorted((tmp_path / "dist").glob("*.cdx.json")) and (tmp_path / "dist" / "provenance.json").is_file()
    assert (recipe_dir / "plain.lock.toml").is_file()
    assert token not in out, [line for line in out.splitlines() if token in line][:5]
    for root in (tmp_path / "build", tmp_path / "dist", cache, recipe_dir):
        assert not _hits(root, token.encode()), _hits(root, token.encode())
    assert _project_state() == project_before


def _project_state() -> str:
    """What git sees of the checkout (tracked changes and untracked files): the runs must leave it as it was."""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True,
                          text=True).stdout
