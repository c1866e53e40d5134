"""Which MIGraphX, HIP and ORT APIs a tree calls that the system's headers do not declare.

Found before anything compiles (the api-check stage runs after configure; `bump` runs it on a new revision):
the translation units CMake will compile (compile_commands.json) and the tree's own headers they include
are read as code (cxxscan.py); every use of a library's API (its C names, its namespace, the member functions
data/system_apis.toml lists) is looked up in the words of that library's headers, found in the include
folders those compile commands use. A name used outside a probe-guarded block that no header declares is
missing: the compile would fail on it. data/system_apis.toml also says which release has a known name.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from toolkit.apicheck import cxxscan
from toolkit.apicheck.compiledb import SYSTEM_INCLUDE_DIRS, TreeFiles
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON

DATA = Path(__file__).with_name("data") / "system_apis.toml"
_HEADER_SUFFIXES = (".h", ".hpp", ".hxx", ".hh", ".inc", ".inl", "")
_WORD = re.compile(rb"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Library:
    key: str
    name: str
    headers: tuple[str, ...]
    version_header: str
    version_macros: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    namespaces: tuple[str, ...]
    members: tuple[str, ...]
    known: tuple[tuple[tuple[str, ...], str], ...]
    tables: re.Pattern[str] | None = None  # types that are tables of function pointers (OrtApi, OrtEpApi, ...)
    getters: re.Pattern[str] | None = None  # functions returning such a table (Ort::GetApi())

    def has_it(self, api: str) -> str | None:
        last = api.rsplit("::", 1)[-1]
        for names, where in self.known:
            if any(fnmatch(api, n) or fnmatch(last, n) for n in names):
                return where
        return None


def load_libraries(path: Path = DATA) -> tuple[dict[str, Library], set[str]]:
    """The libraries data/system_apis.toml describes, and the macros of other platforms."""
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    skip = set(data.pop("platform", {}).get("skip_macros", ()))
    libraries = {}
    for key, t in data.items():
        libraries[key] = Library(
            key, t["name"], tuple(t["headers"]), t["version_header"], tuple(t["version_macros"]),
            tuple(re.compile(rf"\b(?:{p})\b") for p in t["patterns"]), tuple(t["namespaces"]), tuple(t["members"]),
            tuple((tuple(k["names"]), k["has_it"]) for k in t.get("known", ())),
            _alternatives(t.get("tables", ())), _alternatives(t.get("table_getters", ())))
    return libraries, skip


def _alternatives(patterns: Sequence[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


def table_variables(lib: Library, code: str) -> set[str]:
    """Names the code gives a reference or pointer to one of the library's function tables
    (`const OrtApi& ort_api`, `const OrtEpApi* ep_api_`): members, parameters and locals alike."""
    if lib.tables is None:
        return set()
    declared = re.finditer(rf"\b(?:{lib.tables.pattern})\s*(?:const\s*)?[&*]+\s*(?:const\s+)?(\w+)\b(?!\s*\()", code)
    return {m.group(1) for m in declared}


def table_calls(lib: Library, text: str, variables: set[str]) -> list[str]:
    """The function-table members a line calls: `var.Name(`, `var->Name(`, `GetApi().Name(`."""
    names = []
    if variables:
        pattern = rf"(?<!\w)(?:{'|'.join(map(re.escape, sorted(variables)))})\s*(?:\.|->)\s*(\w+)\s*\("
        names += re.findall(pattern, text)
    if lib.getters is not None:
        names += re.findall(rf"\b(?:{lib.getters.pattern})\s*\([^()]*\)\s*(?:\.|->)\s*(\w+)\s*\(", text)
    return names


@dataclass(frozen=True)
class Missing:
    library: str  # display name
    api: str
    where: str  # first use, file:line relative to the tree
    uses: int
    has_it: str | None  # which release has it, when data knows
    guard: str | None = None  # the probe macro the uses sit under (then the tree copes without it)

    def line(self, found: str) -> str:
        text = f"{self.library} API `{self.api}` ({self.where}" + (f", {self.uses} uses" if self.uses > 1 else "")
        text += f") is not in {found}"
        return text + (f"; {self.has_it} has it" if self.has_it else "")


@dataclass
class LibraryFacts:
    name: str
    headers: Path | None  # the folder of its headers the compile uses; None: not found
    version: str | None
    package: str | None = None  # the distribution package that owns the headers, with its version

    def describe(self) -> str:
        if self.headers is None:
            return f"{self.name}: no headers found"
        what = f"{self.name} {self.version or '(version unknown)'}"
        if self.package:
            what += f" [{self.package}]"
        return f"{what} headers in {self.headers}"


@dataclass
class ApiCheck:
    libraries: dict[str, LibraryFacts] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)  # unguarded: the compile fails on each
    guarded: list[Missing] = field(default_factory=list)  # under a probe: the tree copes without them
    files: int = 0

    def problems(self) -> list[str]:
        return [m.line(self.found_in(m.library)) for m in self.missing]

    def found_in(self, library: str) -> str:
        facts = next((f for f in self.libraries.values() if f.name == library), None)
        return f"the headers of {facts.name} {facts.version or ''}".rstrip() + f" ({facts.headers})" \
            if facts and facts.headers else f"any {library} header"

    def to_json(self) -> JSON:
        return {"libraries": {k: vars(v) | {"headers": str(v.headers) if v.headers else None}
                              for k, v in self.libraries.items()},
                "missing": [vars(m) for m in self.missing], "guarded": [vars(m) for m in self.guarded],
                "files": self.files}

    @classmethod
    def from_json(cls, data: JSON) -> ApiCheck:
        libs = {k: LibraryFacts(v["name"], Path(v["headers"]) if v["headers"] else None, v["version"], v["package"])
                for k, v in data["libraries"].items()}
        return cls(libs, [Missing(**m) for m in data["missing"]], [Missing(**m) for m in data["guarded"]],
                   data["files"])

    def error(self, what: str) -> ToolkitError:
        listed = "\n".join(f"  {p}" for p in self.problems())
        return ToolkitError(f"{what} calls APIs the system's libraries lack (the compile would fail on each):\n"
                            f"{listed}",
                            hint="build against a newer library (a build root or --migraphx-home/--rocm-path with "
                                 "it), or patch the tree to do without (see 0001-probe-migraphx-apis.patch of "
                                 "umbrella-ep-real for a probe that keeps the code for newer libraries)")


def check(files: TreeFiles, keys: list[str], cmake_texts: list[str], path: Path = DATA) -> ApiCheck:
    """Check the API uses in `files` of the libraries `keys` against their headers."""
    libraries, skip = load_libraries(path)
    unknown = [k for k in keys if k not in libraries]
    if unknown:
        raise ToolkitError(f"api check: no library {unknown[0]!r} in {path}", hint=f"known: {', '.join(libraries)}")
    chosen = [libraries[k] for k in keys]
    guards = cxxscan.probe_macros(cmake_texts) | {m for lib in libraries.values() for m in lib.version_macros}
    result = ApiCheck(files=len(files.paths))
    sources, own, code = {}, set(files.defines), []
    for rel, text in files.texts():
        sources[rel] = cxxscan.code_lines(text, guards, skip)
        code.append(cxxscan.strip_code(text))
        own |= cxxscan.declared_names(code[-1])
    for lib in chosen:
        folder = header_folder(lib, [d for d in files.include_dirs if not _inside(d, files.tree)])
        result.libraries[lib.key] = LibraryFacts(lib.name, folder, header_version(lib, folder),
                                                         owning_package(folder))
        if folder is None:
            continue
        words, pasted = header_words(folder.parent, lib.headers)

        def known(name: str, words: set[str] = words, pasted: set[str] = pasted) -> bool:
            # Names a header makes by token pasting (migraphx_shape_##x, with x from a list macro) are known
            # when the pasted part is a word of the headers.
            return name in words or name in own or any(name.startswith(p) and name[len(p):] in words for p in pasted)

        tables = set().union(*(table_variables(lib, c) for c in code))
        found = _uses(lib, sources, known, tables)
        for (api, guard), (where, count) in sorted(found.items(), key=lambda item: item[1][0]):
            missing = Missing(lib.name, api, where, count, lib.has_it(api), guard)
            (result.guarded if guard else result.missing).append(missing)
    return result


def _uses(lib: Library, sources: dict[str, list[cxxscan.CodeLine]], known: Callable[[str], bool],
          tables: set[str]) -> dict[tuple[str, str | None], tuple[str, int]]:
    """{(api, guard or None): (first file:line, count)} of every use of `lib` that `known` does not accept."""
    found: dict[tuple[str, str | None], list[Any]] = {}  # [first file:line, count], counted in place
    unguarded: set[str] = set()
    for rel, lines in sorted(sources.items()):
        for line in lines:
            for api in _names(lib, line.text, tables):
                if all(known(part) for part in api.split("::")[1:] or [api]):
                    continue
                key = (api, line.guard)
                if line.guard is None:
                    unguarded.add(api)
                entry = found.setdefault(key, [f"{rel}:{line.number}", 0])
                entry[1] += 1
    # A name also used unguarded is missing; its guarded uses add nothing.
    return {k: tuple(v) for k, v in found.items() if k[1] is None or k[0] not in unguarded}


def _names(lib: Library, text: str, tables: set[str]) -> list[str]:
    names = [m.group(0) for p in lib.patterns for m in p.finditer(text)]
    names += table_calls(lib, text, tables)
    for ns in lib.namespaces:
        names += [f"{ns}::{m.group(1)}" for m in re.finditer(rf"(?<![\w:]){ns}::((?:\w+::)*\w+)", text)]
    for member in lib.members:
        if re.search(rf"(?:\.|->)\s*{member}\s*\(", text):
            names.append(member)
    return names


def header_folder(lib: Library, include_dirs: list[Path]) -> Path | None:
    """The first `<include dir>/<header folder>` of the library that exists, in the compile's search order."""
    for directory in [*include_dirs, *SYSTEM_INCLUDE_DIRS]:
        for name in lib.headers:
            if (Path(directory) / name).is_dir():
                return Path(directory) / name
    return None


_WORDS_CACHE: dict[Path, tuple[set[str], set[str]]] = {}
_PASTED = re.compile(rb"\b([A-Za-z_]\w*)\s*##")
# Literals are matched first so that a `//` or `/*` inside one starts no comment.
_COMMENT_OR_LITERAL = re.compile(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/', re.S)


def _uncommented(data: bytes) -> bytes:
    return _COMMENT_OR_LITERAL.sub(lambda m: m.group(0) if m.group(0)[:1] in b"\"'" else b" ", data)


def header_words(include_dir: Path, folders: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """Every identifier in the code of the headers under include_dir/<folder> (declarations, macros, members
    alike; a name a comment mentions, as HIP 7's do of what HIP 6 had, is not declared), and the prefixes their
    macros paste names onto (`migraphx_shape_##x`)."""
    key = Path(include_dir) / "|".join(folders)
    if key not in _WORDS_CACHE:
        words: set[bytes] = set()
        pasted: set[bytes] = set()
        for folder in folders:
            for path in (Path(include_dir) / folder).rglob("*"):
                if path.is_file() and path.suffix in _HEADER_SUFFIXES:
                    data = _uncommented(path.read_bytes())
                    words.update(_WORD.findall(data))
                    pasted.update(_PASTED.findall(data))
        _WORDS_CACHE[key] = ({w.decode("ascii") for w in words}, {p.decode("ascii") for p in pasted})
    return _WORDS_CACHE[key]


def _inside(path: Path, tree: Path) -> bool:
    return Path(path) == tree or Path(tree) in Path(path).parents


def header_version(lib: Library, folder: Path | None) -> str | None:
    if folder is None:
        return None
    header = folder.parent / lib.version_header
    if not header.is_file():
        return None
    text = header.read_text(encoding="utf-8", errors="replace")
    parts = []
    for macro in lib.version_macros:
        match = re.search(rf"#\s*define\s+{macro}\s+(\d+)", text)
        if match is None:
            break
        parts.append(match.group(1))
    return ".".join(parts) or None


def owning_package(folder: Path | None, status: Path = Path("/var/lib/dpkg/status")) -> str | None:
    """'PACKAGE VERSION' of the Debian package that installed the headers (dpkg's records), if any."""
    info = status.parent / "info"
    if folder is None or not info.is_dir():
        return None
    wanted = str(folder) + "/"
    for listing in sorted(info.glob("*.list")):
        try:
            if wanted not in listing.read_text(encoding="utf-8", errors="replace"):
                continue
        except OSError:
            continue
        package = listing.stem.split(":")[0]
        match = re.search(rf"^Package: {re.escape(package)}\n(?:.+\n)*?Version: (\S+)", status.read_text(
            encoding="utf-8", errors="replace"), re.M)
        return f"{package} {match.group(1)}" if match else package
    return None
