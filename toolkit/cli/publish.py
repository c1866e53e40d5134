"""`publish`: upload a release's dist folder to a package index (the logic: toolkit/release/publish.py)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "publish", help="check a release's dist folder (SHA256SUMS, the index's rules, twine check --strict) and "
                        "upload its wheels to a package index, the meta-package after the variants it requires",
        description="Check DIST (every file SHA256SUMS lists, every wheel listed, nothing the index refuses: "
                    "PyPI's platform tags, size limit, public versions and license files; twine check --strict), "
                    "then upload its wheels with twine, each after the wheels it requires. Credentials: "
                    "TWINE_USERNAME and TWINE_PASSWORD, keyring, or the URL's user:password; none is ever printed. "
                    "Given none in the URL or environment, the index is asked first: one without authentication "
                    "gets the wheels without, one that needs credentials stops the publish (a dry run too) unless "
                    "keyring holds them.")
    p.add_argument("dist", type=Path, metavar="DIST", help="the release's dist folder (build/<recipe>/dist)")
    p.add_argument("--repository-url", required=True, metavar="URL",
                   help="the index's upload URL (PyPI's is its legacy/ endpoint, twine's default); USER:TOKEN@ before "
                        "the host passes credentials to twine through its environment")
    p.add_argument("--dry-run", action="store_true",
                   help="check (the credentials the index needs too), then print the wheels in upload order and "
                        "the URL (redacted); upload nothing")
    p.add_argument("--skip-existing", action="store_true",
                   help="a wheel the index already has is skipped instead of failing the upload")
    p.add_argument("--index-rules", metavar="NAME",
                   help="check the wheels against this set of index rules (toolkit/release/index_rules.json: `pypi`, "
                        "`none`, ...) instead of the set of the URL's index (PyPI's for its upload URLs, none for "
                        "any other): for a proxy or mirror that uploads to PyPI")
    p.add_argument("--size-limit", type=_mib, metavar="MIB",
                   help="the index's upload limit per file in MiB, instead of its rules' (PyPI: 100, unless it "
                        "granted the project more)")
    p.set_defaults(func=cmd_publish)


def _mib(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a size in MiB above 0 (e.g. 100)")
    return value


def cmd_publish(args: argparse.Namespace) -> int:
    from toolkit.release.publish import PublishOptions, publish

    return publish(PublishOptions(args.dist, args.repository_url, dry_run=args.dry_run,
                                  skip_existing=args.skip_existing, index_rules=args.index_rules,
                                  size_limit_mib=args.size_limit))
