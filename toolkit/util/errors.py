"""One exception type for every failure a user can act on.

Every stage raises ToolkitError with the thing that is wrong (file, key, URL, patch, hunk) and what to
do about it; the CLI prints it without a traceback and exits 2.
"""

from __future__ import annotations

# How a hint spells a toolkit command: as it runs when printed, from the project folder after README's set-up
# (the system's Python lacks the toolkit's dependencies, so a bare `python -m toolkit` would not).
RUN_TOOLKIT = ".nox/toolkit/bin/python -m toolkit"


class ToolkitError(Exception):
    """A failure with a message for the user and, optionally, a hint saying what to do."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class RecipeError(ToolkitError):
    """A recipe file is malformed: the message names the file and the key."""
