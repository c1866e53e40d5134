"""`python -m toolkit root make|show|image|prune|diff|lock|run`: build roots from the command line."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

from toolkit.buildroot import make, record, sandbox, session
from toolkit.recipe import packageset
from toolkit.recipe.load import PROJECT_ROOT
from toolkit.util import log
from toolkit.util.debian_mirror import debian_mirror
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("root", help="Debian build roots: make, show, image, prune, diff against the lock, lock, run in")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)

    def verb(name: str, help: str, func: Callable[[argparse.Namespace], int],
             positional: bool = True) -> argparse.ArgumentParser:
        v = verbs.add_parser(name, help=help)
        what = f"package set: a name in containers/roots/ or a .toml path (default {packageset.DEFAULT})"
        if positional:
            v.add_argument("name", nargs="?", default=packageset.DEFAULT, help=what)
        else:   # a command follows: a positional name would swallow its first word
            v.add_argument("--name", default=packageset.DEFAULT, help=what)
        v.set_defaults(func=func)
        return v

    m = verb("make", "make the root (or reuse the cached one) and print its path", cmd_make)
    m.add_argument("--locked", action="store_true",
                   help="fail when the root's packages differ from the committed lock file")
    verb("show", "print the root's path, how it was made, its package count and its images", cmd_show)
    i = verb("image", "make the root's OCI image (root + the toolkit's venv; reused when its tag exists)", cmd_image)
    i.add_argument("--engine", help="container engine: podman or docker (default: env "
                   "TOOLKIT_CONTAINER_ENGINE, podman, docker)")
    i.add_argument("--dry-run", action="store_true", help="print the tag and what goes in; import nothing")
    pr = verb("prune", "remove the set's stale roots, their venvs and its stale images (exit 1 if one is in use)",
              cmd_prune)
    pr.add_argument("--engine", help="container engine: podman or docker (default: env "
                    "TOOLKIT_CONTAINER_ENGINE, podman, docker)")
    pr.add_argument("--dry-run", action="store_true", help="list what would be removed; remove nothing")
    d = verb("diff", "list packages that differ between the root and the lock file (exit 1 if any)", cmd_diff)
    d.add_argument("--lock", type=Path, help="lock file to compare with (default: <name>.lock beside the set)")
    verb("lock", "write the lock file from the root's installed packages", cmd_lock)
    r = verb("run", "run a command inside the root: root run [--name NAME] [--bind DIR]... -- CMD ARGS (the project "
             "and each host path CMD ARGS name are bound at their own paths; it runs in the project)", cmd_run,
             positional=False)
    r.add_argument("--bind", action="append", type=Path, default=[], metavar="DIR",
                   help="host folder to mount at the same path inside (repeatable)")
    r.add_argument("command", nargs=argparse.REMAINDER, help="the command (after --)")


def _root(name: str) -> tuple[packageset.PackageSet, Path]:
    """The package set and its root (made if needed; TOOLKIT_BUILDROOT's folder when that is set)."""
    return packageset.load(name), make.ensure_root(name)


def cmd_make(args: argparse.Namespace) -> int:
    if os.environ.get(make.ENV_BUILDROOT):
        print(make.ensure_root(args.name))
        return 0
    print(make.make_root(packageset.load(args.name), locked=args.locked))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    spec = packageset.load(args.name)
    root = Path(os.environ[make.ENV_BUILDROOT]).resolve() if os.environ.get(make.ENV_BUILDROOT) \
        else make.root_path(spec)
    print(f"package set: {spec.file} (sha256 {spec.digest()})")
    try:
        mirror = debian_mirror()
        source = f"{mirror.url} (from {mirror.origin})"
    except ToolkitError as exc:
        source = f"no Debian mirror: {exc.hint}"
    print(f"packages:    {len(spec.packages)} asked for, suites {', '.join(spec.apt_suites)} from {source}")
    if not (root / "usr").is_dir():
        print(f"root:        not made yet (would be {root}; `{RUN_TOOLKIT} root make {args.name}`)")
    else:
        _show_root(root)
    from toolkit.buildroot import image, prune

    for line in image.listing(args.name, Path.cwd()):
        print(line)
    for stale in prune.stale_roots(spec):
        print(f"stale root:  {stale} (`{RUN_TOOLKIT} root prune {args.name}` removes it)")
    return 0


def _show_root(root: Path) -> None:
    print(f"root:        {root}" + (f" (from env {make.ENV_BUILDROOT})" if os.environ.get(make.ENV_BUILDROOT) else ""))
    facts = make.info(root)
    if facts:
        seconds = facts["seconds"]
        print(f"made:        {facts['made']}: debootstrap {seconds['debootstrap']} s, apt {seconds['apt']} s, "
              f"size {log.human_size(facts['bytes'])}")
        print(f"installed:   {len(facts['packages'])} packages" +
              (f" from {facts['mirror']}" if facts.get("mirror") else ""))
    else:
        print("made:        elsewhere (no toolkit record inside)")
        print(f"installed:   {len(record.query(root))} packages")


def cmd_image(args: argparse.Namespace) -> int:
    from toolkit.buildroot import image

    made = image.ensure_image(args.name, Path.cwd(), args.engine, dry_run=args.dry_run)
    print(made.tag)
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from toolkit.buildroot import prune

    outcome = prune.prune(args.name, Path.cwd(), args.engine, dry_run=args.dry_run)
    return prune.report(outcome, args.name, args.dry_run)


def cmd_diff(args: argparse.Namespace) -> int:
    spec, root = _root(args.name)
    lock = args.lock or spec.lock_file
    digest, old = record.read_lock(lock)
    changes = record.diff(old, record.query(root))
    if digest != spec.digest():
        log.warn(f"{lock} was written for another package set than {spec.file.name}")
    for change in changes:
        print(change.line())
    log.info(f"{root}: {len(changes)} packages differ from {lock}")
    return 1 if changes else 0


def cmd_lock(args: argparse.Namespace) -> int:
    spec, root = _root(args.name)
    packages = record.query(root)
    record.write_lock(spec.lock_file, spec.name, spec.digest(), packages)
    log.info(f"wrote {spec.lock_file} ({len(packages)} packages from {root})")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise ToolkitError("root run: no command given", hint="root run [--name NAME] [--bind DIR] -- CMD ARGS")
    root = make.ensure_root(args.name)
    plan = session.run_plan(command, args.bind, root=root, project=PROJECT_ROOT)
    return sandbox.run_in_root(root, list(plan.argv), binds=plan.binds, cwd=plan.cwd, check=False).returncode
