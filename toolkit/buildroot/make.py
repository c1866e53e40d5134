"""Make a build root from a package set, once, and keep it in the toolkit cache.

    <cache>/roots/<name>-<digest16>/          the root (complete ones only: built beside, then renamed)
    <cache>/roots/.<name>-<digest16>.tmp-PID  a root being made (removed by the next maker if its maker died)
    <cache>/roots/.<name>-<digest16>.lock     held while making: a second process waits, then reuses
    <cache>/roots/debs, apt-archives          Debian packages downloaded once, reused by every rebuild

The root is made with `debootstrap` (in a mount namespace of its own, so its /proc mount cannot outlive
it), then apt inside the root through bubblewrap, from this machine's Debian mirror
(toolkit.util.debian_mirror), which the root's record names but its digest does not. Its exact record
(every package and version) and the times each step took go to `var/lib/ort-amdgpu-toolkit/root.json`
inside it; the committed lock file beside the package set is compared with it, and any difference is listed.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

from toolkit.buildroot import record, sandbox
from toolkit.recipe import packageset
from toolkit.recipe.packageset import PackageSet
from toolkit.util import log
from toolkit.util.debian_mirror import ENV as ENV_DEBIAN_MIRROR
from toolkit.util.debian_mirror import debian_mirror
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text
from toolkit.util.locks import WorkLock
from toolkit.util.process import run

ENV_BUILDROOT = "TOOLKIT_BUILDROOT"
INFO = Path("var/lib/ort-amdgpu-toolkit/root.json")


def ensure_root(name: str = packageset.DEFAULT) -> Path:
    """The root for package set `name` (or a .toml path): made once, then reused from the toolkit cache.

    With env TOOLKIT_BUILDROOT set to a folder, that folder is the root, as is (a root prepared by hand).
    """
    given = os.environ.get(ENV_BUILDROOT)
    if given:
        path = Path(given).expanduser()
        if not (path / "usr").is_dir():
            raise ToolkitError(f"env {ENV_BUILDROOT}={given}: not a build root folder (no usr/ in it)",
                               hint=f"unset {ENV_BUILDROOT} to make the root, or point it at a root filesystem")
        return path.resolve()
    return make_root(packageset.load(name))


def root_path(spec: PackageSet, cache: Path | None = None) -> Path:
    cache = sandbox.cache_dir() if cache is None else Path(cache)
    return cache / "roots" / f"{spec.name}-{spec.digest()[:16]}"


def info(root: Path) -> JSON | None:
    """What the toolkit recorded when it made `root` (None for a root made elsewhere)."""
    path = Path(root) / INFO
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def planned(name: str = packageset.DEFAULT) -> str:
    """What ensure_root(name) would do, said without doing it (a dry run's line)."""
    given = os.environ.get(ENV_BUILDROOT)
    if given:
        return f"build root: {ENV_BUILDROOT}={given}, used as it is"
    spec = packageset.load(name)
    final = root_path(spec)
    if final.is_dir():
        return f"build root {spec.name}: ready at {final}"
    return f"build root {spec.name}: missing, would be made at {final} ({cost(spec, final.parent)})"


def cost(spec: PackageSet, roots: Path) -> str:
    """Roughly what making a root takes: what the last root made in this cache took, else a typical figure."""
    made = [r for r in (info(p) for p in roots.iterdir() if p.is_dir()) if r and "bytes" in r] \
        if roots.is_dir() else []
    steps = f"debootstrap, then apt-get install of {len(spec.packages)} packages from a Debian mirror"
    if not made:
        return f"{steps}: typically several minutes and about 5 GiB, once"
    last = max(made, key=lambda r: r.get("made", ""))
    seconds = sum(last.get("seconds", {}).values())
    return (f"{steps}: the last root made here ({last.get('name')}) took {seconds:.0f} s and "
            f"{log.human_size(last['bytes'])}, once")


def make_root(spec: PackageSet, cache: Path | None = None, *, locked: bool = False) -> Path:
    """Make (or reuse) the root of `spec`; `locked`: a record that differs from the lock file is an error."""
    final = root_path(spec, cache)
    if final.is_dir():
        made = (info(final) or {}).get("made")
        log.stage("root", f"{spec.name}: reused" + (f" (made {made})" if made else "") + f": {final}")
        return final
    roots = final.parent
    # Said before anything starts: the caller (compile-check, a build in a root) may not have asked for a root.
    log.stage("root", f"{spec.name}: not in the toolkit cache; making it now at {final} ({cost(spec, roots)})")
    with WorkLock(final):
        if final.is_dir():   # made by another process while this one waited
            log.stage("root", f"{spec.name}: made by another process: {final}")
            return final
        for stale in roots.glob(f".{final.name}.tmp-*"):
            remove_tree(stale, "half-made root")
        work = roots / f".{final.name}.tmp-{os.getpid()}"
        try:
            facts = _make(spec, work, roots)
            _check_lock(spec, facts["packages"], locked)
            atomic_write_text(work / INFO, json.dumps(facts, indent=2) + "\n")
            os.rename(work, final)
        except BaseException:
            remove_tree(work, "half-made root")
            raise
    log.stage("root", f"{spec.name}: ready at {final} ({facts['seconds']['debootstrap']} s debootstrap, "
                      f"{facts['seconds']['apt']} s apt, {log.human_size(facts['bytes'])})")
    return final


def _make(spec: PackageSet, work: Path, roots: Path) -> JSON:
    mirror = debian_mirror()   # before anything is written: without one, say how to name it
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise ToolkitError("debootstrap is not installed: it makes build roots from Debian's packages",
                           hint="apt-get install debootstrap (or set TOOLKIT_BUILDROOT to a prepared root)")
    unshare = shutil.which("unshare")
    if unshare is None:
        raise ToolkitError("unshare (util-linux) is not installed", hint="apt-get install util-linux")
    sandbox.bwrap_path()
    debs = roots / "debs"
    archives = roots / "apt-archives"
    for folder in (debs, archives / "partial"):
        folder.mkdir(parents=True, exist_ok=True)

    # dpkg's fsync after every file costs minutes on thousands of files, and a root half-made by a crash
    # is thrown away anyway. Placed before debootstrap, whose own dpkg runs read it too.
    unsafe_io = work / "etc/dpkg/dpkg.cfg.d/toolkit-unsafe-io"
    atomic_write_text(unsafe_io, "force-unsafe-io\n")
    if spec.path_exclude or spec.path_include:
        atomic_write_text(work / "etc/dpkg/dpkg.cfg.d/toolkit-path-exclude", spec.dpkg_excludes())

    log.stage("root", f"{spec.name}: debootstrap --variant={spec.variant} {spec.suite} from {mirror.url} "
                      f"(Debian mirror from {mirror.origin})")
    start = time.monotonic()
    argv = [unshare, "--mount", "--propagation", "private", "--", debootstrap, f"--variant={spec.variant}",
            f"--cache-dir={debs}", spec.suite, str(work), mirror.url]
    run(argv, f"debootstrap {spec.suite} from {mirror.url}", output="merge",
        hint=f"check that {mirror.url} (from {mirror.origin}) is reachable and carries suite {spec.suite!r}, "
             f"or set {ENV_DEBIAN_MIRROR} to a Debian mirror that does")
    seconds = {"debootstrap": round(time.monotonic() - start, 1)}
    for deb in (work / "var/cache/apt/archives").glob("*.deb"):   # debootstrap's copies; --cache-dir has them
        deb.unlink()

    apt = work / "etc/apt"
    atomic_write_text(apt / "sources.list", spec.sources_list(mirror.url))
    atomic_write_text(apt / "apt.conf.d/90toolkit", spec.apt_conf())
    if spec.pins:
        atomic_write_text(apt / "preferences.d/toolkit", spec.preferences())

    log.stage("root", f"{spec.name}: apt-get install {len(spec.packages)} packages")
    start = time.monotonic()
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    # Downloads go to the cache (bound at its own path), so the root holds none and a rebuild reuses them.
    apt_get = ["apt-get", "-q", "-o", f"Dir::Cache::Archives={archives}"]
    # A Debian mirror on a local disk (file://) is bound at its own path, where sources.list names it.
    binds = [archives] + ([Path(unquote(urlsplit(mirror.url).path))] if mirror.url.startswith("file:") else [])
    sandbox.run(work, [*apt_get, "update"], binds=binds, env=env, writable=True, capture=True)
    sandbox.run(work, [*apt_get, "install", "-y", "--no-install-recommends", *spec.packages],
                binds=binds, env=env, writable=True, capture=True)
    seconds["apt"] = round(time.monotonic() - start, 1)
    unsafe_io.unlink()

    packages = record.query(work)
    return {
        "name": spec.name, "package_set": spec.digest(), "file": str(spec.file), "mirror": mirror.url,
        "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": seconds,
        "bytes": tree_size(work), "packages": packages,
    }


def _check_lock(spec: PackageSet, packages: record.Record, locked: bool) -> None:
    if not spec.lock_file.is_file():
        if locked:
            raise ToolkitError(f"{spec.lock_file}: no lock file to check the root against",
                               hint=f"write it with `{RUN_TOOLKIT} root lock {spec.name}`")
        log.stage("root", f"{spec.name}: no lock file {spec.lock_file.name}; "
                          f"`{RUN_TOOLKIT} root lock {spec.name}` writes one")
        return
    digest, old = record.read_lock(spec.lock_file)
    if digest != spec.digest():
        message = f"{spec.lock_file} was written for another package set than {spec.file.name}"
        if locked:
            raise ToolkitError(message, hint=f"rewrite it with `{RUN_TOOLKIT} root lock {spec.name}`")
        log.warn(f"{message}; rewrite it with `{RUN_TOOLKIT} root lock {spec.name}`")
    changes = record.diff(old, packages)
    if not changes:
        log.stage("root", f"{spec.name}: same packages as {spec.lock_file.name} ({len(packages)})")
        return
    lines = "\n".join(f"  {c.line()}" for c in changes)
    message = f"{spec.name}: the root differs from {spec.lock_file} in {len(changes)} packages:\n{lines}"
    if locked:
        raise ToolkitError(message, hint="the archive moved on: review the changes, then "
                                         f"`{RUN_TOOLKIT} root lock {spec.name}`")
    log.warn(message)


def remove_tree(path: Path, what: str) -> None:
    """Remove `what` (a half-made root, a stale one); refuse if anything is mounted inside it (never delete
    through a mount)."""
    if not path.exists():
        return
    refuse_mounted(path, what)
    shutil.rmtree(path)


def refuse_mounted(path: Path, what: str) -> None:
    """A ToolkitError when anything is mounted inside `path`, which is about to be removed as `what`."""
    prefix = str(path.resolve()) + "/"
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        mounted = [line.split()[4] for line in handle if line.split()[4].startswith(prefix)]
    if mounted:
        raise ToolkitError(f"{path}: cannot remove a {what}, something is mounted inside: {mounted[0]}",
                           hint=f"umount -R {mounted[0]}, then run again")


def tree_size(path: Path) -> int:
    """Bytes `path` takes on disk (0 when du cannot tell)."""
    proc = run(["du", "-s", "-B1", "-x", path], check=False)
    return int(proc.stdout.split()[0]) if proc.returncode == 0 else 0

