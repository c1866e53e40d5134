"""Compile every translation unit of a hipified tree with the build root's hipcc; report per unit.

Third-party headers come from the recipe's [[compile_check.dep]] archives (verified downloads, mirrors
first); a dep that cannot be had falls back to the root's own copy, and the report says which was used.
Each unit's result is kept in the toolkit cache under its key: the unit's bytes, every header of the output
tree, the flags (with the work tree's own folders written as placeholders), the deps and the compiler. A rerun
with nothing changed compiles nothing, and neither does another work tree (a test's temporary one) whose
hipified output is the same.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.buildroot import ensure_root, run_in_root
from toolkit.recipe.compile_check import CompileCheckSettings, Dep
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text, iter_files, keyed_record, read_json
from toolkit.util.globs import glob_match

if TYPE_CHECKING:
    from toolkit.sources.context import FetchContext

DRIVER = Path(__file__).with_name("driver.py")
ROOT_NAME = "debian-sid-rocm"
RESULTS_DIR = "compile-check"  # under the toolkit cache: one small JSON file per unit key
_ERROR = re.compile(r"^(?P<loc>[^\s:][^:\n]*:\d+(?::\d+)?): (?:fatal )?error: (?P<msg>.*)$", re.M)
# An error of the compiler driver itself, at no place in a file: `clang++: error: invalid target ID 'sm_80'`.
_TOOL_ERROR = re.compile(r"^(?P<tool>[\w.+-]+): (?:fatal )?error: (?P<msg>.*)$", re.M)
# hipcc's line after the compiler it ran failed: the command, not the cause.
_WRAPPER = "failed to execute:"
# Stored with each result; a stored failure of another version was summed up by an earlier first_error, and
# is compiled again rather than shown as it was (hipcc's wrapper line instead of the compiler's error).
_DIAGNOSTIC = 2
_HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".inc", ".inl")


@dataclass
class UnitResult:
    unit: str
    ok: bool
    error: str = ""  # first error: "file:line:col: message"
    seconds: float = 0.0
    cached: bool = False


@dataclass
class CompileReport:
    label: str
    units: list[UnitResult] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)  # "name: pinned archive <url>" or "name: root fallback <dir>"
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(u.ok for u in self.units)

    @property
    def rate(self) -> float:
        return self.passed / len(self.units) if self.units else 0.0

    def summary(self) -> str:
        cached = sum(u.cached for u in self.units)
        return (f"compile check [{self.label}]: {self.passed}/{len(self.units)} units compiled "
                f"({100 * self.rate:.1f}%), {cached} from cache, {self.seconds:.1f} s")

    def lines(self) -> list[str]:
        """What follows the driver's progress: each unit's result once. A unit compiled in this run has its
        `[i/n] ok|FAIL UNIT` line from the driver already, so only a failure's first error is added; a unit
        whose result came from the cache, which the driver never saw, gets its line here."""
        out = [f"headers: {d}" for d in self.deps]
        for u in self.units:
            if u.cached:
                out.append(f"{'ok  ' if u.ok else 'FAIL'} {u.unit} (cached)" + (f": {u.error}" if not u.ok else ""))
            elif not u.ok:
                out.append(f"first error of {u.unit}: {u.error}")
        return out + [self.summary()]

    def causes(self) -> dict[str, list[str]]:
        """Failed units grouped by their first error's message (file:line dropped)."""
        groups: dict[str, list[str]] = {}
        for u in self.units:
            if not u.ok:
                msg = u.error.split(": ", 1)[-1] if ": " in u.error else u.error
                groups.setdefault(msg, []).append(u.unit)
        return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))


def find_root() -> Path:
    """The Debian sid ROCm build root (made once and cached; $TOOLKIT_BUILDROOT names a prepared one)."""
    return Path(ensure_root(ROOT_NAME))


def resolve_deps(settings: CompileCheckSettings, work: Path, root: Path,
                 fetch_ctx: FetchContext) -> tuple[list[str], list[str]]:
    """(-I folders, report lines) for the recipe's deps: pinned archives, else the root's copies."""
    from toolkit.sources.archive import unpack_pinned

    incs: list[str] = []
    lines: list[str] = []
    # The root's own copies are paths inside the root; /usr/include is searched anyway.
    for dep in settings.deps:
        top = None
        try:
            top = unpack_pinned(dep.archive, fetch_ctx, work / "deps" / dep.name, f"compile check dep {dep.name}")
        except ToolkitError as exc:
            if not dep.fallback:
                raise
            first = str(exc).splitlines()[0]
            lines.append(f"{dep.name}: root fallback {', '.join(dep.fallback)} (pinned archive unavailable: {first})")
            incs += [f for f in dep.fallback if f.rstrip("/") != "/usr/include"]
        if top is not None:
            url = dep.archive.url
            digest = dep.archive.sha256 or dep.archive.content or ""
            pin = f"{'sha256' if dep.archive.sha256 else 'content'} {digest[:12]}"
            lines.append(f"{dep.name}: pinned {url.rsplit('/', 1)[-1]} ({pin}) {url}")
            incs += [str((top / i).resolve()) for i in dep.include]
            if dep.protoc:
                incs.append(str(_protoc(dep, top, work, root)))
    return incs, lines


def _protoc(dep: Dep, top: Path, work: Path, root: Path) -> Path:
    """Generate the .pb.h files the dep's headers include (onnx-ml.pb.h), with the root's protoc."""
    out = work / "deps" / f"{dep.name}-generated"
    stamp = out / ".stamp"
    key = json.dumps([dep.archive.sha256 or dep.archive.content, list(dep.protoc)])
    if stamp.is_file() and stamp.read_text() == key:
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    # An argument list, no shell: the file names are the recipe's, each a plain relative .proto path that cannot read
    # as an option (the recipe reader checked them: recipe/compile_check.py, _proto_file); protoc takes no `--`
    # end-of-options marker.
    run_in_root(root, ["protoc", f"--cpp_out={out}", *dep.protoc], binds=[work], cwd=top, capture=True,
                what=f"compile check: protoc for {dep.name}")
    stamp.write_text(key)
    return out


def select_units(settings: CompileCheckSettings, tree: Path, sample: bool) -> list[str]:
    if sample:
        missing = [u for u in settings.sample if not (tree / u).is_file()]
        if missing:
            raise ToolkitError(f"compile check: sample unit(s) not in {tree}: {', '.join(missing[:5])}",
                               "fix [compile_check].sample in the recipe")
        return list(settings.sample)
    return sorted(p.as_posix() for p in iter_files(tree)
                  if any(glob_match(g, p.as_posix()) for g in settings.units))


def _headers_digest(tree: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(iter_files(tree)):
        if p.suffix in _HEADER_SUFFIXES:
            h.update(p.as_posix().encode() + b"\0" + (tree / p).read_bytes() + b"\0")
    return h.hexdigest()


def compile_tree(settings: CompileCheckSettings, tree: Path, source: Path, work: Path, fetch_ctx: FetchContext,
                 jobs: int | None = None, sample: bool = False, label: str = "") -> CompileReport:
    """Compile the units of `tree` (the hipified output); `source` is the tree it came from."""
    started = time.monotonic()
    tree, source, work = tree.resolve(), source.resolve(), work.resolve()
    root = find_root()
    work.mkdir(parents=True, exist_ok=True)
    report = CompileReport(label or tree.name)
    dep_incs, report.deps = resolve_deps(settings, work, root, fetch_ctx)
    gen = work / "generated"
    for g in settings.generated:
        target = gen / g.path
        if not target.is_file() or target.read_text() != g.text:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(target, g.text)
    incs = [i.replace("{output}", str(tree)).replace("{source}", str(source)) for i in settings.include]
    base = [*settings.flags, f"-I{gen}", *(f"-I{i}" for i in incs), *(f"-isystem{i}" for i in dep_incs)]
    base.append("-fsyntax-only" if settings.mode == "syntax-only" else "-c")
    units = select_units(settings, tree, sample)

    store = Path(fetch_ctx.cache.root) / RESULTS_DIR
    generated = [[g.path, g.text] for g in settings.generated]
    # The work tree's folders as placeholders: the same hipified output in another folder has the same key.
    placed = [_placeholders(arg, {str(work): "{work}", str(tree): "{output}", str(source): "{source}"})
              for arg in base]
    common = hashlib.sha256(json.dumps([placed, list(settings.targets), list(settings.hip_flags),
                                        list(settings.cxx_flags), settings.compiler, settings.mode,
                                        _headers_digest(tree), generated, report.deps, str(root)]).encode()).hexdigest()
    jobs_list, keys = [], {}
    for unit in units:
        data = unit.encode() + b"\0" + (tree / unit).read_bytes()
        key = hashlib.sha256(common.encode() + data).hexdigest()
        keys[unit] = key
        hit = _stored(store, key)
        if hit and (settings.mode != "object" or (work / "objects" / (unit + ".o")).is_file()):
            report.units.append(UnitResult(unit, hit["ok"], hit.get("error", ""), hit.get("seconds", 0.0), True))
            continue
        is_hip = any(glob_match(g, unit) for g in settings.hip_units)
        argv = [settings.compiler, *base]
        if is_hip:
            argv += [f"--offload-arch={t}" for t in settings.targets] + [*settings.hip_flags, "-x", "hip"]
        else:
            argv += [*settings.cxx_flags, "-x", "c++", "-D__HIP_PLATFORM_AMD__=1"]
        if settings.mode == "object":
            argv += ["-o", str(work / "objects" / (unit + ".o"))]
            (work / "objects" / unit).parent.mkdir(parents=True, exist_ok=True)
        jobs_list.append({"unit": unit, "argv": argv + [str(tree / unit)], "cwd": str((tree / unit).parent)})

    if jobs_list:
        log.stage("compile-check", f"{len(jobs_list)} unit(s) to compile with the root's {settings.compiler} "
                                   f"({len(units) - len(jobs_list)} cached), {jobs or os.cpu_count()} at a time")
        jobs_file, results_file = work / "jobs.json", work / "results.json"
        results_file.unlink(missing_ok=True)
        atomic_write_text(jobs_file, json.dumps(jobs_list))
        binds = [work, tree, source, DRIVER.parent] + [Path(i) for i in dep_incs if i.startswith(str(work))]
        run_in_root(root, ["python3", str(DRIVER), str(jobs_file), str(results_file), str(jobs or os.cpu_count() or 1)],
                    binds=binds, what="compile check: the driver")
        if not results_file.is_file():
            raise ToolkitError(f"compile check: the driver in {root} exited 0 but wrote no {results_file}")
        for res in json.loads(results_file.read_text()):
            ok = res["rc"] == 0
            err = "" if ok else first_error(res["stderr"], tree, source)
            report.units.append(UnitResult(res["unit"], ok, err, res["seconds"]))
            key = keys[res["unit"]]
            atomic_write_text(keyed_record(store, key),
                              json.dumps({"ok": ok, "error": err, "seconds": res["seconds"],
                                         "diagnostic": _DIAGNOSTIC}) + "\n")
    report.units.sort(key=lambda u: u.unit)
    report.seconds = time.monotonic() - started
    return report


def _placeholders(text: str, folders: dict[str, str]) -> str:
    for folder, name in sorted(folders.items(), key=lambda item: -len(item[0])):  # the deepest folder first
        text = text.replace(folder, name)
    return text


def _stored(store: Path, key: str) -> JSON | None:
    """A unit's stored result, or None (none yet, or a file another run is writing: atomic, so whole or absent)."""
    result = read_json(keyed_record(store, key))
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return None
    return result if result["ok"] or result.get("diagnostic") == _DIAGNOSTIC else None


def first_error(stderr: str, tree: Path, source: Path) -> str:
    """The compiler's first error: `file:line:col: message` (the file relative to the tree), else the driver's
    own (`clang++: error: ...`), else the last line that is not hipcc's wrapper line."""
    m = _ERROR.search(stderr)
    tool = _TOOL_ERROR.search(stderr)
    if tool and (not m or tool.start() < m.start()):
        return f"{tool.group('tool')}: error: {tool.group('msg')}"
    if not m:
        tail = [ln for ln in stderr.strip().splitlines() if ln.strip() and not ln.startswith(_WRAPPER)]
        return tail[-1] if tail else "failed without a diagnostic"
    loc = m.group("loc")
    for prefix, name in ((str(tree) + "/", ""), (str(source) + "/", "source:")):
        if loc.startswith(prefix):
            loc = name + loc[len(prefix):]
    return f"{loc}: {m.group('msg')}"
