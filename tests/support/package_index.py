"""A real package index for tests: pypiserver on 127.0.0.1, and small wheels of pure metadata with a license to put
on it (alone, or as a release's dist folder: ROCm variants, the meta-package, SHA256SUMS).

    with package_index(tmp_path / "index", {"alice": "secret"}) as base:
        ...  # upload to base + "/", install from base + "/simple/"

Uploads need the users' passwords (an htpasswd file, as a real index checks them); listing and downloads are
open. The index never falls back to PyPI, so what pip resolves from it is what was uploaded.
"""

from __future__ import annotations

import base64
import hashlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolkit.recipe.wheel import WheelSettings
from toolkit.release import checksums
from toolkit.wheel.meta import meta_wheel_bytes, variant_licenses

READY_SECONDS = 30


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _htpasswd(path: Path, users: dict[str, str]) -> None:
    from passlib.apache import HtpasswdFile

    passwords = HtpasswdFile(str(path), new=True)
    for user, password in users.items():
        passwords.set_password(user, password)
    passwords.save()


def _wait_ready(server: subprocess.Popen, base: str, log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"pypiserver exited ({server.returncode}) before it served: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise RuntimeError(f"pypiserver did not answer {base}/health within {READY_SECONDS} s: {log.read_text()[-2000:]}")


@contextmanager
def package_index(folder: Path, users: dict[str, str] | None) -> Iterator[str]:
    """pypiserver serving `folder`/packages on a free port of 127.0.0.1, stopped on leaving; yields its base URL
    `http://127.0.0.1:PORT`. users: who may upload, with their passwords (None: anyone may)."""
    packages = folder / "packages"
    packages.mkdir(parents=True, exist_ok=True)
    if users:
        _htpasswd(folder / "htpasswd", users)
        auth = ["-P", str(folder / "htpasswd"), "-a", "update"]
    else:
        auth = ["-P", ".", "-a", "."]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = folder / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen([sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port),
                                   *auth, "--disable-fallback", str(packages)], stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_ready(server, base, log)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def simple_page(base: str, name: str) -> str:
    """The index's /simple/NAME/ page ('' when it lists no such project)."""
    try:
        with urllib.request.urlopen(f"{base}/simple/{name}/", timeout=10) as answer:
            return answer.read().decode()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return ""
        raise


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


LICENSE_TEXT = "MIT License\n\nCopyright (c) the publish tests\n"


def metadata_wheel(folder: Path, name: str, version: str, *, description: str = "# A test wheel\n",
                   content_type: str = "text/markdown", files: dict[str, str | bytes] | None = None,
                   tag: str = "py3-none-any", license_files: dict[str, str] | None = None,
                   license_named: tuple[str, ...] | None = None) -> Path:
    """A small wheel (`tag`, pure Python by default) with a full METADATA (a description twine check --strict
    passes, unless `description`/`content_type` say otherwise), `files` (archive name -> text) and its license
    (PEP 639): `license_files` in .dist-info/licenses/ (default a LICENSE; {} for none), METADATA's License-File
    lines naming `license_named` (default: those files)."""
    stem = f"{name.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    licenses = {"LICENSE": LICENSE_TEXT} if license_files is None else license_files
    named = tuple(licenses) if license_named is None else license_named
    pep639 = "".join(f"License-File: {n}\n" for n in named) + ("License-Expression: MIT\n" if licenses else "")
    metadata = (f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\nSummary: {name} for the publish tests\n"
                f"{pep639}Requires-Python: >=3.10\nDescription-Content-Type: {content_type}\n\n{description}")
    purelib = "true" if tag.endswith("-any") else "false"
    members = {**{k: v if isinstance(v, bytes) else v.encode() for k, v in (files or {}).items()},
               **{f"{info}/licenses/{k}": v.encode() for k, v in licenses.items()},
               f"{info}/METADATA": metadata.encode(),
               f"{info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: {purelib}\n"
                                 f"Tag: {tag}\n").encode()}
    record = "\n".join([*(_record_line(n, d) for n, d in members.items()), f"{info}/RECORD,,"]) + "\n"
    members[f"{info}/RECORD"] = record.encode()
    path = folder / f"{stem}-{tag}.whl"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return path


def release_dist(folder: Path, settings: WheelSettings) -> Path:
    """A dist folder as a release of `settings` ([wheel] with rocm_variants) writes it: a small wheel per ROCm
    variant (its import package saying which), the meta-package, an SBOM, SHA256SUMS."""
    folder.mkdir(parents=True, exist_ok=True)
    for variant, _ in settings.rocm_variants:
        name = f"{settings.distribution}-{variant}"
        metadata_wheel(folder, name, settings.version,
                       files={f"{settings.import_package}/__init__.py": f"VARIANT = {name!r}\n"})
    meta_name, data = meta_wheel_bytes(settings, 1700000000, variant_licenses(settings, folder))
    (folder / meta_name).write_bytes(data)
    (folder / f"{meta_name}.cdx.json").write_text("{}\n")
    checksums.write(folder, [p.name for p in folder.iterdir()])
    return folder
