"""Progress messages: one prefix, to stderr, so stdout stays clean for plans and JSON."""

from __future__ import annotations

import sys

_quiet = False


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def is_quiet() -> bool:
    return _quiet


def info(message: str) -> None:
    if not _quiet:
        print(f"[toolkit] {message}", file=sys.stderr, flush=True)


def stage(name: str, message: str) -> None:
    if not _quiet:
        print(f"[toolkit] {name}: {message}", file=sys.stderr, flush=True)


def warn(message: str) -> None:
    print(f"[toolkit] warning: {message}", file=sys.stderr, flush=True)
