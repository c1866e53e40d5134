"""`python -m toolkit root prune NAME`: remove what earlier versions of a package set left behind.

A changed package set is another root (`<cache>/roots/<name>-<digest16>`); a changed lock file, dependency
list or python is another venv and another image tag. Nothing else removes the old ones, and each costs
gigabytes (a sid root about 5 GiB, its image about 5.6 GB). Stale, for package set NAME:

- a root folder `<name>-<16 hex>` in the toolkit cache other than the set's current root;
- a toolkit venv (`roots/venvs/<key>`) whose recorded root is one of those, or is gone;
- an image of `localhost/ort-amdgpu-root-<name>` other than the current tag. While the current tag cannot be
  known (the root or its venv is not made), only tags of another package set digest are stale.

Nothing in use is removed: a root or venv named on a running process's command line (bwrap names the root it
binds, and the venv's python it runs; podman the root it runs as a container's filesystem), a root whose lock a
maker holds, an image the engine refuses to remove (a container uses it). A root is renamed out of place before it
is deleted, so a half-deleted root is never taken for a made one.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.buildroot import image, make, session
from toolkit.recipe import packageset
from toolkit.util import log
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.locks import WorkLock
from toolkit.util.process import run
from toolkit.util.redact import shorten

_DIGEST16 = re.compile(r"[0-9a-f]{16}")
_LEFTOVER = re.compile(r"\.(?P<root>.+-[0-9a-f]{16})\.tmp-[0-9]+")   # a root half-made or half-removed


@dataclass(frozen=True)
class Item:
    kind: str      # "root", "venv", "partial root" (half-made or half-removed) or "image"
    name: str      # a folder or an image tag
    size: str      # as listed

    def line(self) -> str:
        return f"{self.kind} {self.name} ({self.size})"


@dataclass
class Outcome:
    removed: list[Item] = field(default_factory=list)
    kept: list[tuple[Item, str]] = field(default_factory=list)      # stale, could not be removed: why
    unsure: list[Item] = field(default_factory=list)                # images that may be current


def prune(name: str, project: Path, engine_name: str | None = None, *, dry_run: bool = False) -> Outcome:
    """Remove (with `dry_run`: only list) the stale roots, venvs and images of package set `name`."""
    spec = packageset.load(name)
    outcome = Outcome()
    roots = [r for r in stale_roots(spec) if _free(outcome, "root", r)]
    for link in venv_links():
        _remove_link(outcome, link, dry_run)
    for venv in stale_venvs({str(r) for r in roots}):
        if _free(outcome, "venv", venv):
            _remove_folder(outcome, "venv", venv, dry_run)
    for root in roots:
        _remove_folder(outcome, "root", root, dry_run)
    for leftover, root in leftovers(spec):
        _remove_folder(outcome, "partial root", leftover, dry_run, lock=root)
    _prune_images(outcome, spec, project, engine_name, dry_run)
    return outcome


def stale_roots(spec: packageset.PackageSet) -> list[Path]:
    """The set's root folders in the toolkit cache other than its current one."""
    current = make.root_path(spec)
    prefix = f"{spec.name}-"
    return sorted(p for p in current.parent.glob(prefix + "*")
                  if p != current and _DIGEST16.fullmatch(p.name[len(prefix):]) and p.is_dir() and not p.is_symlink())


def leftovers(spec: packageset.PackageSet) -> list[tuple[Path, Path]]:
    """(folder, root it belongs to) for the set's roots that a killed maker or prune left half-made or
    half-removed; the root's lock tells whether its maker is still at work."""
    roots = make.root_path(spec).parent
    found = []
    for path in sorted(roots.glob(f".{spec.name}-*.tmp-*")):
        match = _LEFTOVER.fullmatch(path.name)
        if match and _DIGEST16.fullmatch(match["root"][len(spec.name) + 1:]) and path.is_dir() \
                and not path.is_symlink():
            found.append((path, roots / match["root"]))
    return found


def venv_links() -> list[Path]:
    """Links in the venvs folder: the toolkit makes none there, and a link is never followed (its target may be
    anywhere), only removed itself."""
    folder = session.venvs_dir()
    return sorted(p for p in folder.glob("*") if p.is_symlink()) if folder.is_dir() else []


def stale_venvs(removed: set[str]) -> list[Path]:
    """Toolkit venvs whose recorded root is in `removed` or is no longer a root. A venv made before roots were
    recorded says nothing and is kept; a link is not a venv (venv_links)."""
    found = []
    for venv in sorted(session.venvs_dir().glob("*")):
        if venv.is_symlink() or not venv.is_dir():
            continue
        owner = session.venv_root(venv)
        if owner is not None and (owner in removed or not (Path(owner) / "usr").is_dir()):
            found.append(venv)
    return found


def users(path: Path) -> list[str]:
    """'pid N (command)' of each running process whose command line names `path` or a path below it."""
    wanted, below = os.fsencode(str(path)), os.fsencode(f"{path}/")
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue   # ended while we looked, or not ours to read
        # podman names a root it runs as `ROOT:O` (rootfs.py), bwrap as itself.
        if any(a == wanted or a.startswith(below) or a.endswith(b"=" + wanted) or a == wanted + b":O" for a in args):
            found.append(f"pid {proc.name} ({b' '.join(args[:3]).decode(errors='replace')} ...)")
    return found


def _free(outcome: Outcome, kind: str, path: Path) -> bool:
    busy = users(path)
    if busy:
        outcome.kept.append((Item(kind, str(path), _size(path)), f"in use by {busy[0]}"))
    return not busy


def _remove_link(outcome: Outcome, link: Path, dry_run: bool) -> None:
    """Remove a link of the venvs folder (the link, never what it points to)."""
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    item = Item("venv link", f"{link} -> {shorten(target, 200)}", "not followed")
    if not dry_run:
        try:
            link.unlink()
        except OSError as exc:
            outcome.kept.append((item, f"cannot remove the link: {exc.strerror}"))
            return
    outcome.removed.append(item)


def _remove_folder(outcome: Outcome, kind: str, path: Path, dry_run: bool, lock: Path | None = None) -> None:
    item = Item(kind, str(path), _size(path))
    if dry_run:
        outcome.removed.append(item)
        return
    try:
        # A root's lock is the one its maker holds; a venv's, the one toolkit_python holds while making it.
        with WorkLock(lock or path, wait=False):
            if lock is None:
                # Checked before the rename: from then on nothing takes it for a made root or venv.
                make.refuse_mounted(path, kind)
                doomed = path.parent / f".{path.name}.tmp-{os.getpid()}"
                path.rename(doomed)
                shutil.rmtree(doomed)
            else:
                make.remove_tree(path, kind)
    except ToolkitError as exc:
        outcome.kept.append((item, exc.message))
        return
    except OSError as exc:   # a folder that changed under us (became a link, lost a permission): named, not a traceback
        outcome.kept.append((item, f"cannot remove it: {exc.strerror or exc}"))
        return
    outcome.removed.append(item)


def _prune_images(outcome: Outcome, spec: packageset.PackageSet, project: Path, engine_name: str | None,
                  dry_run: bool) -> None:
    from toolkit.container.engine import detect_engine

    try:
        engine = detect_engine(engine_name)
    except ToolkitError as exc:
        log.info(f"images not looked at: {exc.message}")
        return
    current = image.describe(str(spec.file), project)
    digest = spec.digest()
    for tag, size, _created in image.tags(engine.path, spec.name):
        stale = image.is_stale(tag, digest, current)
        item = Item("image", tag, size)
        if stale is None:
            outcome.unsure.append(item)
        if not stale:
            continue
        if dry_run:
            outcome.removed.append(item)
            continue
        proc = run([engine.path, "rmi", "--", tag], f"removing image {tag}", env=image.engine_env(), check=False)
        if proc.returncode == 0:
            outcome.removed.append(item)
        else:
            why = (proc.stderr or proc.stdout).strip().splitlines()
            outcome.kept.append((item, f"{engine.name} rmi failed: {why[-1] if why else proc.returncode}"))


def _size(path: Path) -> str:
    return log.human_size(make.tree_size(path))


def report(outcome: Outcome, name: str, dry_run: bool) -> int:
    """Print what was (or would be) removed and kept; 1 when something stale could not be removed."""
    verb = "would remove" if dry_run else "removed"
    for item in outcome.removed:
        print(f"{verb} {item.line()}")
    for item, why in outcome.kept:
        print(f"kept {item.line()}: {why}")
    for item in outcome.unsure:
        print(f"kept {item.line()}: of this package set, and the root or its venv is not made, so which tag is "
              f"current is not known (`{RUN_TOOLKIT} root image {name}` makes them)")
    kinds = ("root", "venv", "image") + (("partial root",) if any(i.kind == "partial root" for i in outcome.removed)
                                          else ())
    counts = {kind: sum(1 for i in outcome.removed if i.kind == kind) for kind in kinds}
    log.stage("prune", f"{name}: {verb} " + ", ".join(f"{n} {kind}(s)" for kind, n in counts.items())
              + (f"; {len(outcome.kept)} stale thing(s) could not be removed" if outcome.kept else ""))
    return 1 if outcome.kept else 0

