"""`publish`: a dist folder of two ROCm variants and the real recipe's meta-package, checked and uploaded to a real
pypiserver on 127.0.0.1 (uploads need a password), then installed from it by pip in a fresh venv."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.support.package_index import metadata_wheel, package_index, release_dist
from tests.support.publishing import META, PASSWORD, SETTINGS, USER, VARIANTS, error_line, index_files, run_publish
from toolkit.release import checksums


def _release(folder: Path) -> Path:
    return release_dist(folder, SETTINGS)


@pytest.fixture
def index(tmp_path):
    with package_index(tmp_path / "index", {USER: PASSWORD}) as base:
        yield base


def _secret_free(proc: subprocess.CompletedProcess) -> None:
    said = proc.stdout + proc.stderr
    for spelling in (PASSWORD, quote(PASSWORD, safe="")):
        assert spelling not in said, said


def _pip_installs(tmp_path: Path, index: str, requirement: str) -> dict[str, str]:
    """What pip in a fresh venv installs for `requirement` from the index alone: name -> the file's sha256."""
    where = tmp_path / requirement
    venv.create(where, with_pip=False)
    # The machine's pip configuration (find-links, extra indexes) is out of the way: only the index resolves.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    subprocess.run([sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"), "install", "-q",
                    "--disable-pip-version-check", "--no-cache-dir", "--index-url", f"{index}/simple/",
                    "--report", str(where / "report.json"), requirement], check=True, env=env, timeout=300)
    report = json.loads((where / "report.json").read_text())
    return {item["metadata"]["name"]: item["download_info"]["archive_info"]["hashes"]["sha256"]
            for item in report["install"]}


def _digest(dist: Path, name: str) -> str:
    wheel = next(dist.glob(f"{name.replace('-', '_')}-{SETTINGS.version}-*.whl"))
    return hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_publish_uploads_the_meta_package_last_and_pip_installs_what_was_published(tmp_path, index):
    dist = _release(tmp_path / "dist")
    proc = run_publish(dist, index + "/", env={"TWINE_USERNAME": USER, "TWINE_PASSWORD": PASSWORD})
    assert proc.returncode == 0, proc.stderr
    uploads = [line for line in proc.stderr.splitlines() if "publish: uploading " in line]
    assert len(uploads) == 3 and f"{META.replace('-', '_')}-{SETTINGS.version}-py3-none-any.whl" in uploads[-1]
    assert "done: 3 uploaded" in proc.stderr.splitlines()[-1]
    assert index_files(index) == sorted(p.name for p in dist.glob("*.whl"))
    # The meta-package brings its default variant; any other variant installs by its own name.
    default = f"{META}-{SETTINGS.default_variant}"
    assert _pip_installs(tmp_path, index, META) == {META: _digest(dist, META), default: _digest(dist, default)}
    other = next(name for name in VARIANTS if name != default)
    assert _pip_installs(tmp_path, index, other) == {other: _digest(dist, other)}
    said = subprocess.run([str(tmp_path / other / "bin" / "python"), "-c",
                           f"import {SETTINGS.import_package} as p; print(p.VARIANT)"],
                          capture_output=True, text=True, check=True)
    assert said.stdout.strip() == other


def test_dry_run_prints_the_order_and_uploads_nothing(tmp_path, index):
    dist = _release(tmp_path / "dist")
    url = f"http://{USER}:{quote(PASSWORD, safe='')}@{index.removeprefix('http://')}/"
    proc = run_publish(dist, url, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    planned = [line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  ") and ".whl" in line]
    assert planned[-1].startswith(META.replace("-", "_") + "-") and len(planned) == 3
    assert "http://***@127.0.0.1" in proc.stdout and "nothing was uploaded" in proc.stdout
    _secret_free(proc)
    assert index_files(index) == []


def test_a_wrong_password_is_one_error_line_without_it(tmp_path, index):
    dist = _release(tmp_path / "dist")
    wrong = "not-the-Secret-42"
    proc = run_publish(dist, index + "/", env={"TWINE_USERNAME": USER, "TWINE_PASSWORD": wrong})
    error_line(proc, "refused the credentials (HTTP 403)", "uploading " + VARIANTS[0].replace("-", "_"))
    assert "hint: they came from TWINE_USERNAME/TWINE_PASSWORD in the environment" in proc.stderr
    assert wrong not in proc.stdout + proc.stderr
    assert index_files(index) == []


def test_a_password_in_the_url_never_appears(tmp_path, index):
    dist = _release(tmp_path / "dist")
    url = f"http://{USER}:{quote(PASSWORD, safe='')}@{index.removeprefix('http://')}/"
    proc = run_publish(dist, url, "-v")     # -v: every line twine prints, and every command run
    assert proc.returncode == 0, proc.stderr
    assert "twine: " in proc.stderr and "http://***@127.0.0.1" in proc.stderr
    _secret_free(proc)
    assert len(index_files(index)) == 3


def test_a_tampered_wheel_stops_before_any_upload(tmp_path, index):
    dist = _release(tmp_path / "dist")
    wheel = next(dist.glob(f"{VARIANTS[0].replace('-', '_')}-*.whl"))
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    proc = run_publish(dist, index + "/", env={"TWINE_USERNAME": USER, "TWINE_PASSWORD": PASSWORD})
    error_line(proc, wheel.name, "does not match its SHA-256 in SHA256SUMS", "nothing was uploaded")
    assert "uploading" not in proc.stderr and index_files(index) == []


def test_a_wheel_failing_twine_check_stops_before_any_upload(tmp_path, index):
    dist = _release(tmp_path / "dist")
    bad = metadata_wheel(dist, VARIANTS[0], SETTINGS.version, content_type="text/x-rst",
                         description="Title\n=====\n\n:nosuchrole:`x`\n")
    checksums.write(dist, [p.name for p in dist.iterdir() if p.name != checksums.FILENAME])
    proc = run_publish(dist, index + "/", env={"TWINE_USERNAME": USER, "TWINE_PASSWORD": PASSWORD})
    error_line(proc, "twine check --strict", bad.name, "syntax errors in markup", "nothing was uploaded")
    assert "uploading" not in proc.stderr and index_files(index) == []


def test_skip_existing_lets_a_second_publish_succeed(tmp_path, index):
    dist = _release(tmp_path / "dist")
    creds = {"TWINE_USERNAME": USER, "TWINE_PASSWORD": PASSWORD}
    # One variant already on the index: the second wheel of the order.
    second = next(dist.glob(f"{VARIANTS[1].replace('-', '_')}-*.whl"))
    early = tmp_path / "early"
    early.mkdir()
    shutil.copy(second, early)
    checksums.write(early, [second.name])
    assert run_publish(early, index + "/", env=creds).returncode == 0
    again = run_publish(dist, index + "/", env=creds)
    error_line(again, f"{second.name} is already on {index}/ (HTTP 400) (the 1 wheel(s) before it are on the index)",
                "hint: an index takes a file name once: rerun with --skip-existing")
    skipping = run_publish(dist, index + "/", "--skip-existing", env=creds)
    assert skipping.returncode == 0, skipping.stderr
    assert "done: 1 uploaded" in skipping.stderr and "2 already there" in skipping.stderr
    assert index_files(index) == sorted(p.name for p in dist.glob("*.whl"))


def test_no_credentials_and_an_unreachable_index_say_what_to_do(tmp_path, index):
    dist = _release(tmp_path / "dist")
    missing = run_publish(dist, index + "/")
    error_line(missing, f"no credentials for {index}/")
    assert "hint: set TWINE_USERNAME and TWINE_PASSWORD" in missing.stderr and "USER:TOKEN@" in missing.stderr
    closed = f"http://127.0.0.1:{_closed_port()}/"
    error_line(run_publish(dist, closed, env={"TWINE_USERNAME": USER, "TWINE_PASSWORD": PASSWORD}),
                f"cannot reach {closed}", "Connection refused")


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("breaks, needles", [
    (lambda d: (d / checksums.FILENAME).unlink(), ("SHA256SUMS: missing", "sha256sum")),
    (lambda d: metadata_wheel(d, "stray", "1.0"), ("stray-1.0-py3-none-any.whl: not listed in",)),
    (lambda d: [p.unlink() for p in d.glob("*.whl")], ("holds no wheel",)),
    (lambda d: (d / f"{META.replace('-', '_')}-{SETTINGS.version}-py3-none-any.whl.cdx.json").unlink(),
     ("listed in SHA256SUMS but missing",)),
])
def test_a_dist_folder_that_cannot_be_published_is_one_error_line(tmp_path, breaks, needles):
    dist = _release(tmp_path / "dist")
    breaks(dist)
    error_line(run_publish(dist, "http://127.0.0.1:9/"), *needles)


def test_bad_arguments_are_one_error_line(tmp_path):
    error_line(run_publish(tmp_path / "none", "http://127.0.0.1:9/"), "not a folder")
    dist = _release(tmp_path / "dist")
    refused = run_publish(dist, "ftp://u:hunter2@host/")
    error_line(refused, "not an http(s) URL", "ftp://***@host/")
    assert "hunter2" not in refused.stderr
    error_line(run_publish(dist, "https://host:port/"), "https://host:port/: not an http(s) URL with a host")


def test_pypi_is_refused_a_local_version_before_any_upload(tmp_path):
    dist = _release(tmp_path / "dist")
    local = metadata_wheel(dist, VARIANTS[0], f"{SETTINGS.version}+glibc2.28")
    checksums.write(dist, [p.name for p in dist.iterdir() if p.name != checksums.FILENAME])
    error_line(run_publish(dist, "https://upload.pypi.org/legacy/", "--dry-run"),
                f"{local.name}: version {SETTINGS.version}+glibc2.28 has a local part (+...), which PyPI refuses")


def test_an_index_without_authentication_takes_the_wheels_without_credentials(tmp_path):
    """A local pypiserver run with `-a . -P .`: the dry run says no credentials are needed, and the publish uploads
    without any (twine alone would stop at `no credentials`)."""
    dist = _release(tmp_path / "dist")
    with package_index(tmp_path / "index", None) as open_index:
        planned = run_publish(dist, open_index + "/", "--dry-run")
        assert planned.returncode == 0, planned.stderr
        assert "(credentials: none: the index takes uploads without authentication)" in planned.stdout
        assert index_files(open_index) == []
        proc = run_publish(dist, open_index + "/")
        assert proc.returncode == 0, proc.stderr
        assert "done: 3 uploaded" in proc.stderr.splitlines()[-1]
        assert index_files(open_index) == sorted(p.name for p in dist.glob("*.whl"))


def test_a_dry_run_to_an_index_that_needs_credentials_says_none_are_given(tmp_path, index):
    dist = _release(tmp_path / "dist")
    refused = run_publish(dist, index + "/", "--dry-run")
    error_line(refused, f"no credentials for {index}/, which asks for them (HTTP 401)", "nothing was uploaded")
    assert "hint: set TWINE_USERNAME and TWINE_PASSWORD" in refused.stderr and refused.stdout == ""
