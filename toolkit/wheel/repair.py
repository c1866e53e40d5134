"""Repair a built wheel with auditwheel, then check what auditwheel does not.

auditwheel grafts the external libraries a manylinux system lacks into the wheel and computes the
most compatible manylinux tag from the symbol versions the libraries need on the machine that runs it:
the tag is read back from the wheel it wrote, never chosen here (a wheel repaired in Debian sid gets sid's
glibc tag; public manylinux_2_28 wheels need the manylinux_2_28 image). Where auditwheel has no policy (libraries
needing a glibc newer than its newest), the toolkit grafts as auditwheel would (graft.py) and computes the PEP 600
tag the same way (glibc_tag.py), or keeps linux_<arch> when the recipe says so. Before auditwheel runs, the
components that ask for it get their RUNPATH (runpath.py), and every library the wheel needs is
classified on this machine (rocm.py): ROCm libraries, by name, by where they resolve or by the package
that owns them, are excluded and stay external; a library that must be bundled but cannot be found fails
here, by name. After it, every ELF file in the repaired wheel must have a non-executable stack, search
paths that stay inside the wheel or point at a ROCm install, no ROCm library inside, and the RUNPATH and
bare-name siblings its component declares, and each library bundled gets its license in the wheel's
.dist-info/licenses/ (licenses.py). A failed check leaves nothing in `out_dir`.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import sys
import tempfile
import zipfile
from calendar import timegm
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from toolkit.binary.elf import ELF_MAGIC, highest_versions, merge_highest, read_elf, version_needs, versions_words
from toolkit.binary.patchelf import find_patchelf
from toolkit.recipe.wheel import Component
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import give_umask_mode
from toolkit.util.process import run
from toolkit.wheel import glibc_tag, licenses, runpath
from toolkit.wheel.graft import graft
from toolkit.wheel.rocm import BY_RECIPE, Need, Resolver, missing_error
from toolkit.wheel.wheelfile import parse_wheel_filename


@dataclass(frozen=True)
class RepairResult:
    wheel: Path
    tag: str  # the most specific platform tag auditwheel gave, e.g. "manylinux_2_34_x86_64"
    platform_tags: tuple[str, ...]  # every platform tag in the file name
    grafted: tuple[str, ...]  # archive paths of libraries auditwheel copied in
    excluded: tuple[str, ...]  # sorted sonames of the ROCm libraries the wheel needs and leaves external
    needs: tuple[Need, ...] = ()  # everything the wheel's libraries need, classified, with the reason


@dataclass(frozen=True)
class Violation:
    library: str  # archive path
    problem: str

    def __str__(self) -> str:
        return f"{self.library}: {self.problem}"


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _origin_relative(entry: str) -> str | None:
    for token in ("$ORIGIN", "${ORIGIN}"):
        if entry == token:
            return ""
        if entry.startswith(token + "/"):
            return entry[len(token) + 1 :]
    return None


def search_path_problem(library: str, entry: str, kind: str,
                        rocm_directory: Callable[[str], str | None] | None = None) -> str | None:
    """Why one RUNPATH/RPATH entry of the archive member `library` is not allowed, or None.

    `rocm_directory(path)` says why an absolute folder belongs to a ROCm install (Resolver.rocm_directory).
    """
    if entry == "":
        return f"{kind} has an empty entry, which the loader reads as the current directory"
    relative = _origin_relative(entry)
    if relative is not None:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(library), relative))
        if resolved == ".." or resolved.startswith("../"):
            return f"{kind} entry {entry!r} points outside the wheel"
        return None
    # /opt/rocm/lib, /opt/rocm-7.2.0/lib, Debian's .../migraphx/lib: the ROCm install the wheel expects.
    if (rocm_directory or Resolver().rocm_directory)(entry):
        return None
    return f"{kind} entry {entry!r} is neither inside the wheel ($ORIGIN/...) nor a ROCm install"


def check_library(library: str, path: Path, excludes: Iterable[str],
                  rocm_directory: Callable[[str], str | None] | None = None, grafted: bool = True) -> list[Violation]:
    """Violations of one ELF member; `grafted`: auditwheel copied it in, so it must not be a ROCm library.

    The wheel's own components are exempt from the name check: ours may share a ROCm prefix
    (libmigraphx-backend.so, libhipdnn-backend.so).
    """
    facts = read_elf(path)
    found = []
    if facts.stack_flags is None:
        found.append(Violation(library, "no PT_GNU_STACK header, so the loader makes the stack executable"))
    elif "X" in facts.stack_flags:
        found.append(Violation(library, f"executable stack (PT_GNU_STACK flags {facts.stack_flags})"))
    for kind, entries in (("RUNPATH", facts.runpath), ("RPATH", facts.rpath)):
        for entry in entries:
            problem = search_path_problem(library, entry, kind, rocm_directory)
            if problem:
                found.append(Violation(library, problem))
    if not grafted:
        return found
    names = {posixpath.basename(library)} | ({facts.soname} if facts.soname else set())
    bundled = sorted(n for n in names if matches_any(n, excludes))
    # auditwheel renames grafted copies (libfoo-1a2b3c4d.so.1), so match the original name too.
    stem, _, rest = posixpath.basename(library).partition(".so")
    original = stem.rsplit("-", 1)[0] + ".so" + rest if "-" in stem else None
    if original and matches_any(original, excludes):
        bundled.append(original)
    if bundled:
        found.append(Violation(library, f"bundles ROCm library {bundled[0]}; it must stay external"))
    return found


def highest_needs(root: Path) -> dict[str, str]:
    """The highest GLIBC_, GLIBCXX_ and CXXABI_ symbol versions any library under `root` needs: what bounds its
    manylinux tag, and the oldest glibc and libstdc++ it loads with."""
    return merge_highest([highest_versions(version_needs(root / member)) for member in elf_members(root)])


def elf_members(root: Path) -> list[str]:
    members = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if full.is_symlink() or not full.is_file():
                continue
            with open(full, "rb") as handle:
                if handle.read(4) == ELF_MAGIC:
                    members.append(full.relative_to(root).as_posix())
    return members


def check_tree(root: Path, excludes: Iterable[str], rocm_directory: Callable[[str], str | None] | None = None,
               own: Iterable[str] = ()) -> list[Violation]:
    """Violations of every ELF file under `root`; `own`: the members the wheel carried before repair."""
    excludes, own = tuple(excludes), set(own)
    rocm_directory = rocm_directory or Resolver().rocm_directory
    found: list[Violation] = []
    for member in elf_members(root):
        found.extend(check_library(member, root / member, excludes, rocm_directory, member not in own))
    return found


def _epoch_of(wheel: Path, env: Mapping[str, str]) -> str:
    """SOURCE_DATE_EPOCH for auditwheel: the caller's (`env`, what it adds to the environment, else this
    process's), else the built wheel's own entry date.

    auditwheel dates entries with SOURCE_DATE_EPOCH or, without it, the unpack directory's mtime (the
    time of the run), which would make every repaired wheel different.
    """
    given = env.get("SOURCE_DATE_EPOCH") or os.environ.get("SOURCE_DATE_EPOCH")
    if given:
        return given
    with zipfile.ZipFile(wheel) as archive:
        stamp = max(info.date_time for info in archive.infolist())
    return str(timegm((*stamp, 0, 0, 0)))


def repair_wheel(wheel: Path, out_dir: Path, excludes: Iterable[str] = (), components: Iterable[Component] = (),
                 rocm_paths: Iterable[str | Path] = (), env: Mapping[str, str] | None = None,
                 platform: str = "manylinux", license_source: licenses.LicenseSource | None = None) -> RepairResult:
    """Repair `wheel` into `out_dir`.

    excludes: soname patterns to leave external beyond ROCm's (the recipe's extras); components: the recipe's
    [wheel] components (their runpath and loads); rocm_paths: ROCm installs besides /opt/rocm* and $ROCM_PATH;
    env: what the caller adds to auditwheel's environment (a release's SOURCE_DATE_EPOCH); platform: the recipe's
    [wheel] platform (`linux`: tagged linux_<arch>, for an index of your own);
    license_source: where the licenses of the libraries it bundles come from (licenses.py).
    """
    wheel, out_dir = Path(wheel), Path(out_dir)
    if not wheel.is_file():
        raise ToolkitError(f"{wheel}: wheel not found", "run the wheel stage first")
    patchelf = find_patchelf()  # auditwheel runs it too: found (or missing) before any work
    resolver = Resolver(excludes, rocm_paths)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".repair-", dir=out_dir) as tmp:
        tmp_path = Path(tmp)
        source = tmp_path / "source"
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(source)
        members = runpath.component_members(elf_members(source), components)
        changed = runpath.set_runpaths(source, members)
        if changed:
            (tmp_path / "in").mkdir()
            staged = tmp_path / "in" / wheel.name
            runpath.rewrite_wheel(wheel, staged, source, changed)
            log.stage("repair", f"RUNPATH set on {', '.join(changed)}")
        else:
            staged = wheel
        needs = resolver.classify(source, elf_members(source))
        error = missing_error(needs)
        if error:
            raise error
        rocm = [n for n in needs if n.kind == "rocm"]
        # Libraries that are ROCm by place or package, not by name, are excluded by their exact soname.
        patterns = tuple(dict.fromkeys((*resolver.patterns, *(n.soname for n in rocm))))
        repaired, how = _repaired((wheel, staged), source, needs, changed, tmp_path / "out",
                                  (patterns, patchelf, env or {}), platform)
        platform_tags = parse_wheel_filename(repaired.name).platform_tags
        unpacked = tmp_path / "unpacked"
        repaired, grafted = _checked(repaired, wheel, unpacked, (patterns, resolver), components, needs,
                                     license_source or licenses.LicenseSource())
        versioned = versions_words(highest_needs(unpacked))  # every family: glibc's and libstdc++'s
        final = out_dir / repaired.name
        give_umask_mode(repaired)  # auditwheel ran under the fixed umask; the file is the user's
        os.replace(repaired, final)
    for label, group in (("ROCm", [n for n in rocm if not n.reason.startswith(BY_RECIPE)]),
                         (BY_RECIPE, [n for n in rocm if n.reason.startswith(BY_RECIPE)])):
        if group:
            log.stage("repair", f"left external ({label}): {', '.join(n.soname for n in group)}")
    most = f", {versioned} at most" if versioned else ""
    log.stage("repair", f"{final.name}: tag {platform_tags[0]} ({how}{most}, not "
                        f"from this machine's glibc), {len(grafted)} grafted, {len(rocm)} libraries left external")
    return RepairResult(final, platform_tags[0], platform_tags, grafted, tuple(sorted(n.soname for n in rocm)),
                        tuple(needs))


def _repaired(wheels: tuple[Path, Path], source: Path, needs: list[Need], changed: list[str], out: Path,
              auditwheel: tuple[tuple[str, ...], Path, Mapping[str, str]], platform: str) -> tuple[Path, str]:
    """The wheel repaired into `out`, and how its tag came: auditwheel's, or, where auditwheel has no policy (the
    libraries or the copies bundled need a newer glibc than its newest), the toolkit's grafting with the tag it
    computes (glibc_tag.py), or the linux_<arch> tag kept ([wheel] platform = "linux")."""
    wheel, staged = wheels
    if platform == "linux":
        return _graft(wheel, source, needs, changed, out), "kept: [wheel] platform = \"linux\""
    highest = merge_highest([highest_needs(source), *(highest_versions(version_needs(Path(n.path)))
                                                      for n in needs if n.kind == "bundled" and n.path)])
    if glibc_tag.beyond_policies(highest):
        arch = parse_wheel_filename(wheel.name).platform_tags[0].removeprefix("linux_")
        tag = glibc_tag.computed_tag(highest, needs, arch)
        return _graft(wheel, source, needs, changed, out, tag), (
            f"computed by the toolkit: auditwheel's policies end at {glibc_tag.newest_policy().name}, and what the "
            "wheel leaves to the system is on that policy's library list")
    patterns, patchelf, env = auditwheel
    return (_auditwheel(staged, wheel, out, patterns, patchelf, env),
            "computed by auditwheel from the glibc symbol versions its libraries need")


def _checked(repaired: Path, wheel: Path, unpacked: Path, rules: tuple[tuple[str, ...], Resolver],
             components: Iterable[Component], needs: list[Need],
             license_source: licenses.LicenseSource) -> tuple[Path, tuple[str, ...]]:
    """The repaired wheel checked, unpacked into `unpacked`, with the licenses of what it bundles (licenses.py);
    returns it (a new file beside `unpacked` when libraries were bundled) and the archive paths of those."""
    with zipfile.ZipFile(repaired) as archive:
        archive.extractall(unpacked)
    before = set(_elf_names(wheel))
    patterns, resolver = rules
    problems = [str(v) for v in check_tree(unpacked, patterns, resolver.rocm_directory, before)]
    problems += runpath.verify(unpacked, runpath.component_members(elf_members(unpacked), components))
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise ToolkitError(
            f"repaired wheel {repaired.name} fails its checks:\n{lines}",
            "link with -z noexecstack, give libraries RUNPATH $ORIGIN (or a ROCm folder) only, and set "
            "runpath on the components whose bare-name dlopens must find their siblings",
        )
    grafted = tuple(m for m in elf_members(unpacked) if m not in before)
    bundled = [licenses.Bundled(m, _build_path(m, needs)) for m in grafted if licenses.is_bundled_member(m)]
    if bundled:
        repaired = licenses.add_bundled_licenses(repaired, unpacked, bundled, unpacked.parent / "licensed",
                                                 license_source)
    missing = licenses.license_problems(repaired)
    if missing:
        raise ToolkitError(f"repaired wheel {repaired.name} lacks licenses: {'; '.join(missing)}",
                           "see toolkit/wheel/data/licenses.json")
    return repaired, grafted


def _build_path(member: str, needs: list[Need]) -> str | None:
    """Where this machine has the library that `member` (a bundled copy) was copied from."""
    name = licenses.original_name(posixpath.basename(member))
    return next((n.path for n in needs if n.path and name in (n.soname, posixpath.basename(n.path))), None)


def _graft(wheel: Path, source: Path, needs: list[Need], runpaths_set: list[str], out: Path,
           tag: str | None = None) -> Path:
    """auditwheel's grafting done here (toolkit/wheel/graft.py) for a wheel auditwheel has no policy for: its
    linux_<arch> tag kept ([wheel] platform = "linux"), or replaced by `tag` (glibc_tag.computed_tag's)."""
    name = parse_wheel_filename(wheel.name)
    if not all(t.startswith("linux_") for t in name.platform_tags):
        raise ToolkitError(f"{wheel.name}: the toolkit's own repair takes a linux_<arch> wheel, not "
                           f"{', '.join(name.platform_tags)}")
    members = elf_members(source)
    changed, added = graft(source, members, needs, f"{name.distribution}.libs")
    if tag is not None:
        [dist_info] = [p.name for p in source.glob("*.dist-info") if p.is_dir()]
        changed.append(glibc_tag.retag_wheel_file(source, dist_info, tag))
    final = wheel.name if tag is None else wheel.name.removesuffix(f"-{'.'.join(name.platform_tags)}.whl") + \
        f"-{tag}.whl"
    out.mkdir(parents=True, exist_ok=True)
    runpath.rewrite_wheel(wheel, out / final, source, {*runpaths_set, *changed}, added)
    return out / final


def _auditwheel(staged: Path, wheel: Path, out: Path, patterns: tuple[str, ...], patchelf: Path,
                added: Mapping[str, str]) -> Path:
    # Each value glued to its option, the wheel an absolute path: none of them reads as an option.
    cmd = [sys.executable, "-m", "auditwheel", "repair", f"--wheel-dir={Path(out).absolute()}"]
    cmd += [f"--exclude={pattern}" for pattern in patterns]
    cmd.append(str(Path(staged).absolute()))
    # auditwheel runs the first patchelf on PATH: the one find_patchelf chose.
    env = {**os.environ, **added, "SOURCE_DATE_EPOCH": _epoch_of(wheel, added),
           "PATH": os.pathsep.join([str(patchelf.parent), os.environ.get("PATH", "")])}
    log.stage("repair", f"auditwheel repair {wheel.name} ({len(patterns)} exclude patterns)")
    # auditwheel zips entries with the modes its unpacked copy got, so the caller's umask would
    # leak into the wheel's bytes; a fixed one keeps repairs identical across machines.
    run(cmd, f"auditwheel repair of {wheel}", output="merge", env=env, umask=0o022,
        hint="see what it says above; `python -m auditwheel show WHEEL` lists what constrains the tag")
    produced = sorted(out.glob("*.whl"))
    if len(produced) != 1:
        raise ToolkitError(f"auditwheel wrote {len(produced)} wheels for {wheel}, expected one")
    return produced[0]


def _elf_names(wheel: Path) -> list[str]:
    names = []
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if not info.is_dir():
                with archive.open(info) as handle:
                    if handle.read(4) == ELF_MAGIC:
                        names.append(info.filename)
    return names
