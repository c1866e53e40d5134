"""`publish`: a release's dist folder checked, then its wheels uploaded to a package index with twine.

Nothing is uploaded until everything is checked: the folder holds wheels, every file SHA256SUMS lists has its
digest (and every wheel is listed), nothing the index is known to refuse is in it (index_rules.py: PyPI's
platform tags, size limit, public versions, license files), and `twine check --strict` passes for each wheel. The
wheels then go up one twine run each, in dependency order: a wheel that requires another distribution of the
folder (the meta-package requires its ROCm variants) goes after it, so an index never serves a meta-package whose
variant is missing.

Credentials are twine's own (TWINE_USERNAME/TWINE_PASSWORD, keyring) or a URL's userinfo, which is taken off the
URL and handed to twine through its environment, never its command line. Given none of those, the index is asked
first (an upload request without a file or credentials, a dry run too): one that takes uploads without
authentication (a local pypiserver run with `-a . -P .`) gets them without, and one that asks for credentials
stops the publish before anything goes up unless keyring holds them. twine's output is captured, and every
line of it is masked (URLs' secrets, and the password itself in any spelling twine could echo) before it reaches
a log line or an error.
"""

from __future__ import annotations

import os
import re
import sys
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from twine.utils import DEFAULT_REPOSITORY, TEST_REPOSITORY

from toolkit.release import checksums, index_rules
from toolkit.util import log, process
from toolkit.util.errors import ToolkitError
from toolkit.util.redact import MASK, redact_text, redact_url, shorten, strip_userinfo
from toolkit.wheel.wheelfile import read_headers

# twine (rich) wraps its messages at the terminal's width, 80 columns when captured: one message, one line.
TWINE_COLUMNS = "400"
CREDENTIAL_HINT = ("set TWINE_USERNAME and TWINE_PASSWORD, keep the password in keyring (`keyring set URL USER`, "
                   "with TWINE_USERNAME set) or put USER:TOKEN@ before the URL's host")


@dataclass(frozen=True)
class Target:
    """The index: its upload URL without userinfo (what twine gets), and the URL's credentials, if any."""
    url: str
    shown: str                       # the URL as given, redacted: what messages say
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    anonymous: bool = False          # the index was asked and takes uploads without credentials

    @property
    def given(self) -> bool:
        """Credentials come from the URL or the environment (not keyring, not none at all)."""
        return self.password is not None or self.username is not None or bool(os.environ.get("TWINE_PASSWORD"))

    @property
    def credentials(self) -> str:
        """Where the credentials come from, in words (never what they are)."""
        if self.anonymous:
            return "none: the index takes uploads without authentication"
        if self.password is not None or self.username is not None:
            return "the URL's user:password"
        if os.environ.get("TWINE_PASSWORD"):
            return "TWINE_USERNAME/TWINE_PASSWORD in the environment"
        return "keyring, where twine looks a password up (none in the URL or TWINE_PASSWORD)"

    @property
    def is_pypi(self) -> bool:
        """PyPI or TestPyPI: where twine itself handles --skip-existing (it refuses the option for any other
        index)."""
        return self.url.startswith(tuple(_origin(url) for url in (DEFAULT_REPOSITORY, TEST_REPOSITORY)))


@dataclass(frozen=True)
class Wheel:
    path: Path
    name: str                        # canonical distribution name
    version: str
    requires: frozenset[str]         # canonical names of every distribution it requires, under any extra


@dataclass(frozen=True)
class PublishOptions:
    dist: Path
    repository_url: str
    dry_run: bool = False
    skip_existing: bool = False
    index_rules: str | None = None        # a set of index_rules.json; None: the one whose upload URLs hold the URL
    size_limit_mib: float | None = None   # the index's per-file limit, over the rules' (a project PyPI granted more)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/"


def _host(url: str) -> str | None:
    """The http(s) URL's host; None for another scheme, no host or a port that is not a number above 0."""
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and (parts.port is None or parts.port > 0)
        return parts.hostname if ok else None
    except ValueError:
        return None


def target(url: str) -> Target:
    """The index of `--repository-url`: an http(s) URL with a host; its userinfo, if any, becomes credentials."""
    if not _host(url):
        raise ToolkitError(f"--repository-url {shorten(redact_text(url), 200)}: not an http(s) URL with a host",
                           hint=f"give the index's upload URL, e.g. PyPI's {DEFAULT_REPOSITORY}")
    netloc = urlsplit(url).netloc
    if "@" not in netloc:
        return Target(url, redact_url(url))
    user, sep, password = netloc.rpartition("@")[0].partition(":")
    return Target(strip_userinfo(url), redact_url(url), unquote(user) or None, unquote(password) if sep else None)


def verify_dist(dist: Path) -> list[Path]:
    """The wheels of `dist`, once the folder is checked against its SHA256SUMS."""
    if not dist.is_dir():
        raise ToolkitError(f"publish {dist}: not a folder", hint="give the dist folder a release wrote "
                                                                 "(build/<recipe>/dist)")
    wheels = sorted(p for p in dist.iterdir() if p.name.endswith(".whl") and p.is_file())
    if not wheels:
        raise ToolkitError(f"publish {dist}: holds no wheel (*.whl)", hint="give the dist folder a release wrote "
                                                                          "(build/<recipe>/dist)")
    sums = dist / checksums.FILENAME
    if not sums.is_file():
        raise ToolkitError(f"{sums}: missing, so the wheels cannot be checked against the release",
                           hint="publish the dist folder a release wrote; for wheels gathered by hand, check them "
                                "and write it in the folder with `sha256sum *.whl > SHA256SUMS`")
    listed = checksums.listed(dist)
    for wheel in wheels:
        if wheel.name not in listed:
            raise ToolkitError(f"{wheel}: not listed in {sums}", hint="a file added after the release was "
                               "checksummed is not published: remove it, or add its line if it belongs there")
    bad = checksums.verify(dist)
    if bad:
        first = dist / bad[0]
        said = "does not match its SHA-256 in SHA256SUMS" if first.is_file() else "listed in SHA256SUMS but missing"
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise ToolkitError(f"{first}: {said}{more}; nothing was uploaded",
                           hint="restore the release's files or make the release again; `sha256sum -c SHA256SUMS` "
                                "in the folder lists every mismatch")
    return wheels


def read_wheel(path: Path) -> Wheel:
    """A wheel's name, version and the distributions it requires, from its METADATA."""
    try:
        with zipfile.ZipFile(path) as archive:
            headers = read_headers(archive, "METADATA")
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError) as exc:
        raise ToolkitError(f"{path}: not a readable wheel ({exc})") from None
    if headers is None:
        raise ToolkitError(f"{path}: no *.dist-info/METADATA in it: not a wheel")
    requires = set()
    for spec in headers.get_all("Requires-Dist") or []:
        try:
            requires.add(canonicalize_name(Requirement(spec).name))
        except InvalidRequirement:
            continue   # twine check has passed it; a requirement the index can't read orders nothing
    return Wheel(path, canonicalize_name(headers.get("Name", "")), headers.get("Version", ""), frozenset(requires))


def upload_order(wheels: list[Wheel]) -> list[Wheel]:
    """The wheels, each after every wheel of the distributions it requires; otherwise by file name."""
    pending = sorted(wheels, key=lambda w: w.path.name)
    order: list[Wheel] = []
    while pending:
        waiting = {w.name for w in pending}
        ready = [w for w in pending if (w.requires - {w.name}).isdisjoint(waiting)]
        if not ready:
            raise ToolkitError(f"{pending[0].path.parent}: these wheels require each other, so none can go first: "
                               f"{', '.join(w.path.name for w in pending)}")
        order += ready
        pending = [w for w in pending if w not in ready]
    return order


def _secrets(where: Target) -> list[str]:
    found = [where.password or "", os.environ.get("TWINE_PASSWORD", "")]
    return sorted({spelling for secret in found if secret for spelling in (secret, quote(secret, safe=""))},
                  key=len, reverse=True)


def mask(text: str, where: Target) -> str:
    """text with URLs' secrets and the password, in any spelling twine could print it, replaced by ***."""
    text = redact_text(text)
    for secret in _secrets(where):
        text = text.replace(secret, MASK)
    return text


def _twine(args: list[str], what: str, where: Target, timeout: float | None = None) -> tuple[int, list[str]]:
    """twine's exit code and output lines (masked, trailing padding off); twine runs from this Python."""
    env = {**os.environ, "COLUMNS": TWINE_COLUMNS}
    if where.anonymous:  # twine insists on a user and a password; an index without authentication ignores them
        env.update({"TWINE_USERNAME": "anonymous", "TWINE_PASSWORD": ""})
    if where.username is not None:
        env["TWINE_USERNAME"] = where.username
    if where.password is not None:
        env["TWINE_PASSWORD"] = where.password
    proc = process.run([sys.executable, "-m", "twine", "--no-color", *args], what, output="merge", env=env,
                       check=False, timeout=timeout)
    lines = [line.rstrip() for line in mask(proc.stdout or "", where).splitlines()]
    for line in lines:
        log.debug(f"twine: {line}")
    return proc.returncode, lines


_CHECKING = re.compile(r"^Checking (?P<path>.+): (?P<status>PASSED|FAILED)")


def check_wheels(wheels: list[Path], where: Target) -> None:
    """`twine check --strict` on every wheel; a failure names each failing wheel and twine's reasons."""
    log.stage("publish", f"checking {len(wheels)} wheel(s) with twine check --strict")
    code, lines = _twine(["check", "--strict", *(str(w.absolute()) for w in wheels)], "twine check", where,
                         timeout=600)
    if code == 0:
        return
    failures: dict[str, list[str]] = {}
    current = None
    for line in lines:
        found = _CHECKING.match(line)
        if found:
            current = Path(found["path"]).name if found["status"] == "FAILED" else None
            if current:
                failures[current] = []
        elif current and line.strip():
            failures[current].append(re.sub(r"^(ERROR|WARNING)\s+", "", line.strip()))
    said = "; ".join(f"{name}: {' '.join(reasons) or 'failed'}" for name, reasons in failures.items())
    raise ToolkitError(f"twine check --strict: {shorten(said or _last(lines), 600)}; nothing was uploaded",
                       hint="fix the wheel's metadata (its description must render on PyPI) and make the "
                            "release again")


def _last(lines: list[str]) -> str:
    said = [line.strip() for line in lines if line.strip()]
    return said[-1] if said else "no output"


def _status(text: str) -> int | None:
    codes = re.findall(r"(?:Response from \S+:\s*|HTTPError: )(\d{3})\b", text)
    return int(codes[-1]) if codes else None


def _upload_error(wheel: Path, where: Target, lines: list[str]) -> ToolkitError:
    """One error for a failed upload, saying what to do."""
    text = " ".join(" ".join(lines).split())
    status = _status(text)
    if "NonInteractive" in text or "Credential not found" in text:
        return ToolkitError(f"no credentials for {where.shown} to upload {wheel.name}", hint=CREDENTIAL_HINT)
    if status in (401, 403):
        return ToolkitError(f"{where.shown} refused the credentials (HTTP {status}) uploading {wheel.name}",
                            hint=f"they came from {where.credentials}; check the user and password or token (PyPI "
                                 "takes the user __token__ with an API token), and that the user may upload there")
    if status == 409 or "already exist" in text.lower():
        return ToolkitError(f"{wheel.name} is already on {where.shown} (HTTP {status})",
                            hint="an index takes a file name once: rerun with --skip-existing to upload only what "
                                 "it lacks")
    if re.search(r"ConnectionError|Max retries exceeded|Failed to establish|Name or service not known", text):
        errno = re.search(r"\[Errno -?\d+\] [^'\")\]]+", text)
        return ToolkitError(f"cannot reach {where.shown} to upload {wheel.name}"
                            + (f": {errno[0].strip()}" if errno else ""),
                            hint=f"check the URL (PyPI's upload URL is {DEFAULT_REPOSITORY}) and that the index runs "
                                 "and is reachable from here")
    errors = [line.strip() for line in lines if line.startswith("ERROR")]
    reason = re.sub(r"^ERROR\s+", "", errors[-1]) if errors else _last(lines)
    return ToolkitError(f"uploading {wheel.name} to {where.shown} failed: {shorten(reason, 300)}",
                        hint="rerun with -v to see twine's whole output")


def upload_wheel(wheel: Path, where: Target, skip_existing: bool) -> bool:
    """Upload one wheel; False when it was already there and --skip-existing said to go on."""
    args = ["upload", "--non-interactive", "--disable-progress-bar", "--verbose", f"--repository-url={where.url}"]
    if skip_existing and where.is_pypi:
        args.append("--skip-existing")
    code, lines = _twine([*args, str(wheel.absolute())], f"upload of {wheel.name}", where)
    text = " ".join(lines)
    if code == 0:
        return "appears to already exist" not in text
    # twine handles --skip-existing for PyPI only; any other index's "file exists" answer is told apart here.
    if skip_existing and (_status(text) == 409 or "already exist" in text.lower()):
        return False
    raise _upload_error(wheel, where, lines)


def credentials_needed(where: Target, dry_run: bool = False) -> Target:
    """`where`, asked (when neither the URL nor the environment gives credentials) whether it takes uploads
    without them: an upload request without a file or credentials, which an index that needs them answers 401
    or 403. One that does, with no password in keyring for TWINE_USERNAME either, is a ToolkitError now, before
    any upload (or, dry run, as the upload would fail)."""
    if where.given:
        return where
    import requests

    try:
        answer = requests.post(where.url, data={":action": "file_upload", "protocol_version": "1"}, timeout=60,
                               allow_redirects=False)
    except requests.RequestException as exc:
        reason = shorten(mask(str(exc), where), 300)
        if dry_run:  # a plan made away from the index (CI's own check of its release job) says what it could not ask
            log.warn(f"could not ask {where.shown} whether it needs credentials ({reason}); the upload will")
            return where
        raise ToolkitError(f"cannot reach {where.shown} to ask whether it needs credentials: {reason}",
                           hint=f"check the URL (PyPI's upload URL is {DEFAULT_REPOSITORY}) and that the index runs "
                                "and is reachable from here") from None
    if answer.status_code not in (401, 403):
        log.stage("publish", f"{where.shown} takes uploads without credentials (it answered HTTP "
                             f"{answer.status_code} to a request without them)")
        return replace(where, anonymous=True)
    user = os.environ.get("TWINE_USERNAME")
    if not (user and _keyring_password(where.url, user)):
        raise ToolkitError(f"no credentials for {where.shown}, which asks for them (HTTP {answer.status_code}); "
                           "nothing was uploaded", hint=CREDENTIAL_HINT)
    return where


def _keyring_password(url: str, user: str) -> bool:
    """Whether keyring holds a password for `user` at `url`, where twine looks it up."""
    try:
        import keyring

        return bool(keyring.get_password(url, user))
    except Exception:  # keyring missing or its backend failing: twine would find nothing there either
        return False


def print_plan(order: list[Wheel], where: Target, skip_existing: bool) -> None:
    """The dry run's plan, on stdout: the index, where credentials come from, the wheels in upload order."""
    print(f"publish {len(order)} wheel(s) to {where.shown} (credentials: {where.credentials}), in this order:")
    names = {w.name for w in order}
    for wheel in order:
        after = sorted(wheel.requires & names - {wheel.name})
        print(f"  {wheel.path.name}" + (f"   (after {', '.join(after)}, which it requires)" if after else ""))
    if skip_existing:
        print("  (--skip-existing: a file the index already has is left as it is)")
    print("dry run: SHA256SUMS and twine check --strict passed; nothing was uploaded")


def publish(options: PublishOptions) -> int:
    """Check `options.dist`, then upload its wheels in order (or, dry run, print the order); the exit code."""
    where = target(options.repository_url)
    wheels = verify_dist(options.dist)
    log.stage("publish", f"{options.dist}: {len(wheels)} wheel(s) match SHA256SUMS")
    rules = index_rules.rules_for(where.url, options.index_rules, options.size_limit_mib)
    index_rules.check(wheels, rules)
    check_wheels(wheels, where)
    order = upload_order([read_wheel(path) for path in wheels])
    where = credentials_needed(where, options.dry_run)
    if options.dry_run:
        print_plan(order, where, options.skip_existing)
        return 0
    skipped = []
    for number, wheel in enumerate(order, 1):
        log.stage("publish", f"uploading {wheel.path.name} ({number}/{len(order)}) to {where.shown}")
        try:
            uploaded = upload_wheel(wheel.path, where, options.skip_existing)
        except ToolkitError as exc:
            if number == 1:
                raise
            # what is on the index now, so a rerun (with --skip-existing) is known to be safe
            raise ToolkitError(f"{exc.message} (the {number - 1} wheel(s) before it are on the index)",
                               hint=exc.hint) from None
        if not uploaded:
            log.stage("publish", f"{wheel.path.name}: already on the index, skipped (--skip-existing)")
            skipped.append(wheel)
    log.stage("publish", f"done: {len(order) - len(skipped)} uploaded to {where.shown}"
                         + (f", {len(skipped)} already there" if skipped else ""))
    return 0
