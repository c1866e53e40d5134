"""Which Debian mirror this machine uses: TOOLKIT_DEBIAN_MIRROR, else the machine's own apt sources.

No recipe or package set names a Debian mirror's host. Recipes write a file of the Debian archive as
`debian:<path>` (`debian:pool/main/o/onnxruntime/<name>.deb`, pinned by sha256 like any download) and
build roots are made from this mirror; both are resolved here, when something is fetched:

1. `TOOLKIT_DEBIAN_MIRROR` (the archive's base URL, e.g. `http://<mirror>/debian`), when set;
2. else the first Debian archive among apt's sources, in the order apt reads them: `sources.list`, then
   `sources.list.d/*.list` and `*.sources` (deb822) by name. An entry counts when it is enabled, of type
   `deb`, with an http(s)://, ftp:// or file: URI whose path has a `debian` folder (Debian's archive
   layout: `<base>/debian/dists`, `<base>/debian/pool`); `debian-security` and `debian-ports` are other
   archives and never picked. A mirror laid out differently is named with TOOLKIT_DEBIAN_MIRROR.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from toolkit.util.errors import ToolkitError

ENV = "TOOLKIT_DEBIAN_MIRROR"
SCHEME = "debian:"
APT_DIR = Path("/etc/apt")
_URI = re.compile(r"^(https?|ftp)://|^file:")


@dataclass(frozen=True)
class DebianMirror:
    url: str      # the archive's base URL, without a trailing slash
    origin: str   # where it was found: "env TOOLKIT_DEBIAN_MIRROR", or the apt file

    def file_url(self, path: str) -> str:
        return f"{self.url}/{path.lstrip('/')}"


def debian_mirror(env: Mapping[str, str] | None = None, apt_dir: Path | None = None) -> DebianMirror:
    """The Debian mirror to fetch from, or a ToolkitError saying how to name one."""
    env = os.environ if env is None else env
    apt_dir = APT_DIR if apt_dir is None else Path(apt_dir)
    given = env.get(ENV, "").strip()
    if given:
        if not _URI.match(given) or re.search(r"[\s\x00-\x1f\x7f]", given):
            raise ToolkitError(f"env {ENV}={given}: expected the Debian archive's base URL "
                               "(http(s)://, ftp:// or file:)",
                               hint=f"set {ENV}=http://<debian mirror>/debian (the folder holding dists/ and pool/), "
                                    "or unset it to use this machine's apt sources")
        return DebianMirror(_normal(given), f"env {ENV}")
    seen: list[str] = []
    for file, uri in apt_source_uris(apt_dir):
        seen.append(f"{uri} ({file})")
        if is_debian_archive(uri):
            return DebianMirror(_normal(uri), str(file))
    found = "; its sources name only " + ", ".join(seen) if seen else " (no enabled deb sources found there)"
    raise ToolkitError(
        f"no Debian mirror: {ENV} is not set and this machine's apt configuration in {apt_dir} has no Debian "
        f"archive{found}",
        hint=f"set {ENV}=http://<debian mirror>/debian (the folder holding dists/ and pool/)")


def _normal(uri: str) -> str:
    """No trailing slash; apt's `file:/srv/debian` as `file://` + the absolute path, the form downloads read."""
    uri = uri.rstrip("/")
    if uri.startswith("file:") and not uri.startswith("file://"):
        uri = "file://" + uri[len("file:"):]
    return uri


def resolve_url(url: str, env: Mapping[str, str] | None = None, apt_dir: Path | None = None) -> str:
    """`debian:<path>` -> <the Debian mirror>/<path>; any other URL as it is."""
    if not url.startswith(SCHEME):
        return url
    return debian_mirror(env, apt_dir).file_url(url[len(SCHEME):])


def is_debian_archive(uri: str) -> bool:
    if not _URI.match(uri):
        return False
    parts = [p for p in urlsplit(uri).path.split("/") if p]
    return "debian" in parts


def apt_source_uris(apt_dir: Path | None = None) -> list[tuple[Path, str]]:
    """(file, URI) of every enabled `deb` source, in the order apt reads them."""
    apt_dir = APT_DIR if apt_dir is None else Path(apt_dir)
    files = [apt_dir / "sources.list"]
    parts = apt_dir / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    out: list[tuple[Path, str]] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        uris = _deb822_uris(text) if file.suffix == ".sources" else _one_line_uris(text)
        out += [(file, uri) for uri in uris]
    return out


def _one_line_uris(text: str) -> list[str]:
    """`deb [options] URI suite [component...]` lines (sources.list(5), one-line style)."""
    uris = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line.startswith("deb ") and not line.startswith("deb\t"):
            continue
        rest = line[3:].strip()
        if rest.startswith("["):
            close = rest.find("]")
            if close < 0:
                continue
            rest = rest[close + 1:].strip()
        words = rest.split()
        if len(words) >= 2:
            uris.append(words[0])
    return uris


def _deb822_uris(text: str) -> list[str]:
    """`URIs:` of the stanzas with `Types: deb` that are not `Enabled: no` (sources.list(5), deb822 style)."""
    uris = []
    for stanza in re.split(r"\n[ \t]*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.splitlines():
            if line.startswith("#"):
                continue
            if line[:1] in (" ", "\t") and key is not None:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes").lower() == "no":
            continue
        uris += fields.get("uris", "").split()
    return uris
