"""SHA256SUMS in the GNU coreutils format, so `sha256sum -c SHA256SUMS` checks a release folder."""

from __future__ import annotations

from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_text, sha256_file

FILENAME = "SHA256SUMS"


def render(folder: Path, names: list[str]) -> str:
    lines = []
    for name in sorted(names):
        if "/" in name or "\n" in name or "\\" in name:
            raise ToolkitError(f"{folder / name}: cannot list in {FILENAME}: names must be plain file "
                               "names without '/', '\\' or newlines")
        # Two spaces: text mode in coreutils' format, which is what `sha256sum` itself writes.
        lines.append(f"{sha256_file(folder / name)}  {name}\n")
    return "".join(lines)


def write(folder: Path, names: list[str]) -> Path:
    path = Path(folder) / FILENAME
    atomic_write_text(path, render(Path(folder), names))
    return path


def listed(folder: Path) -> dict[str, str]:
    """The names SHA256SUMS in `folder` lists, each with its digest; a malformed line is an error naming it."""
    folder = Path(folder)
    out: dict[str, str] = {}
    for number, line in enumerate((folder / FILENAME).read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ToolkitError(f"{folder / FILENAME}:{number}: not a '<sha256>  <name>' line: {line!r}")
        if out.get(name, digest) != digest:
            raise ToolkitError(f"{folder / FILENAME}:{number}: {name} is listed again with another digest")
        out[name] = digest
    return out


def verify(folder: Path) -> list[str]:
    """Names whose content no longer matches SHA256SUMS (missing files count as mismatches)."""
    folder = Path(folder)
    return [name for name, digest in listed(folder).items()
            if not (folder / name).is_file() or sha256_file(folder / name) != digest]
