"""Load the CUDA-to-HIP mapping tables (tables/*.json, one per API family) into one lookup.

Each family file may hold:
  headers            {"cuda_runtime.h": "hip/hip_runtime.h"}      #include renames
  header_patterns    [{"match": regex, "to": replacement}]         #include renames by pattern
  unsupported_headers {"cooperative_groups/reduce.h": reason}     known headers with no HIP counterpart
  identifiers        {"cuMemAlloc": "hipMalloc"}                   irregular identifier renames
  prefix_renames     [{"from": "cuda", "to": "hip", "names": [...]}]  regular renames, each name listed
  same               [...]                                         names HIP keeps as they are (RCCL)
  namespaces         {"cub": "hipcub"}                             renamed only where followed by ::
  qualified          {"thrust::cuda": "thrust::hip"}               renamed only after that qualifier
  calls              {"__shfl_sync": {"to": ..., "drop_first": true} | {"to": ..., "args": "1"}}
  unsupported        {"name": reason}                              known names with no HIP counterpart
  when               {"dnn": "miopen"}                             the family applies only under that setting
`_detect.json` holds the patterns that say which leftover names and headers are CUDA's, and the prefixes every
CUDA name starts with (the converter's scanner looks only at words that start with one of them).

Every name is listed explicitly, so "not in any table" means "not known", which is what the unmapped
report is built on. A name mapped twice by the active families is an error naming both files.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.hipify.lexer import candidate_scanner
from toolkit.util.errors import ToolkitError

TABLES_DIR = Path(__file__).with_name("tables")
DETECT_FILE = "_detect.json"

_FAMILY_KEYS = {
    "family", "summary", "when", "headers", "header_patterns", "unsupported_headers", "identifiers",
    "prefix_renames", "same", "namespaces", "qualified", "calls", "unsupported",
}


@dataclass(frozen=True)
class CallRule:
    to: str
    drop_first: bool = False
    args: str | None = None  # replaces the whole argument list when set


@dataclass
class Tables:
    identifiers: dict[str, str] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)
    qualified: dict[str, dict[str, str]] = field(default_factory=dict)  # last name -> {qualifier: new text}
    calls: dict[str, CallRule] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    header_patterns: list[tuple[re.Pattern[str], str]] = field(default_factory=list)
    unsupported: dict[str, str] = field(default_factory=dict)
    unsupported_headers: dict[str, str] = field(default_factory=dict)
    cuda_identifier: re.Pattern[str] | None = None
    cuda_header: re.Pattern[str] | None = None
    scanner: re.Pattern[str] | None = None  # lexer.candidate_scanner over the scan prefixes
    plain: set[str] = field(default_factory=set)  # scanned names found in no table and not CUDA's (a memo)
    digest: str = ""
    families: list[str] = field(default_factory=list)

    def map_header(self, name: str) -> str | None:
        if name in self.headers:
            return self.headers[name]
        for pattern, repl in self.header_patterns:
            if pattern.match(name):
                return pattern.sub(repl, name)
        return None

    def is_cuda_identifier(self, name: str) -> bool:
        return bool(self.cuda_identifier and self.cuda_identifier.match(name))

    def is_cuda_header(self, name: str) -> bool:
        return bool(self.cuda_header and self.cuda_header.match(name))


def tables_digest(directory: Path = TABLES_DIR) -> str:
    """A hash of every table file's name and bytes: part of each cached file's key."""
    digest = hashlib.sha256()
    for path in sorted(directory.glob("*.json")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _fail(path: Path, key: str, message: str) -> ToolkitError:
    return ToolkitError(f"{path}: key '{key}': {message}", "fix the mapping table")


def load_tables(options: dict[str, str], directory: Path = TABLES_DIR) -> Tables:
    """All families whose `when` matches `options` (e.g. {"dnn": "miopen"}), merged into one Tables."""
    tables = Tables(digest=tables_digest(directory))
    owner: dict[str, Path] = {}  # name -> file that maps it, for duplicate errors
    scoped: dict[str, Path] = {}  # namespaces and qualified names -> their file, for the prefix check

    def claim(path: Path, key: str, name: str) -> None:
        if name in owner:
            raise _fail(path, key, f"'{name}' is already mapped by {owner[name].name}")
        owner[name] = path

    for path in sorted(directory.glob("*.json")):
        if path.name == DETECT_FILE:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ToolkitError(f"{path}: not valid JSON: {exc}") from None
        unknown = set(data) - _FAMILY_KEYS
        if unknown:
            raise _fail(path, sorted(unknown)[0], f"unknown key (known: {', '.join(sorted(_FAMILY_KEYS))})")
        when = data.get("when", {})
        if any(options.get(k) != v for k, v in when.items()):
            continue
        tables.families.append(data.get("family", path.stem))

        for name, new in data.get("identifiers", {}).items():
            claim(path, "identifiers", name)
            tables.identifiers[name] = new
        for i, group in enumerate(data.get("prefix_renames", [])):
            old, new = group["from"], group["to"]
            for name in group["names"]:
                if not name.startswith(old):
                    raise _fail(path, f"prefix_renames[{i}]", f"'{name}' does not start with '{old}'")
                claim(path, f"prefix_renames[{i}]", name)
                tables.identifiers[name] = new + name[len(old):]
        for name in data.get("same", []):
            claim(path, "same", name)
            tables.identifiers[name] = name
        for name, new in data.get("namespaces", {}).items():
            tables.namespaces[name] = new
            scoped[name] = path
        for qualified, new in data.get("qualified", {}).items():
            qualifier, _, last = qualified.rpartition("::")
            tables.qualified.setdefault(last, {})[qualifier] = new
            scoped[last] = path
        for name, rule in data.get("calls", {}).items():
            claim(path, "calls", name)
            tables.calls[name] = CallRule(rule["to"], bool(rule.get("drop_first", False)), rule.get("args"))
        for name, reason in data.get("unsupported", {}).items():
            claim(path, "unsupported", name)
            tables.unsupported[name] = reason
        for name, new in data.get("headers", {}).items():
            if name in tables.headers:
                raise _fail(path, "headers", f"header '{name}' is already mapped")
            tables.headers[name] = new
        for i, rule in enumerate(data.get("header_patterns", [])):
            try:
                tables.header_patterns.append((re.compile(rule["match"]), rule["to"]))
            except re.error as exc:
                raise _fail(path, f"header_patterns[{i}]", f"bad regex: {exc}") from None
        tables.unsupported_headers.update(data.get("unsupported_headers", {}))

    detect = json.loads((directory / DETECT_FILE).read_text(encoding="utf-8"))
    tables.cuda_identifier = re.compile("|".join(f"(?:{p})" for p in detect["identifier_patterns"]))
    tables.cuda_header = re.compile("|".join(f"(?:{p})" for p in detect["header_patterns"]))
    prefixes = detect["scan_prefixes"]
    _check_prefixes({**scoped, **owner}, tuple(prefixes), directory / DETECT_FILE)
    tables.scanner = candidate_scanner(prefixes)
    return tables


def _check_prefixes(names: dict[str, Path], prefixes: tuple[str, ...], detect: Path) -> None:
    """Every name a table lists starts with a scan prefix: the scanner would never show it the others."""
    for name, path in names.items():
        if not name.startswith(prefixes):
            raise ToolkitError(f"{path}: '{name}' starts with none of the scan prefixes of {detect.name} "
                               f"({', '.join(prefixes)})", f"add its prefix to scan_prefixes in {detect}")
