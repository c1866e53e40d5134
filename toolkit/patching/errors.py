"""Errors of the patch stage.

SeriesError: the series file itself is wrong (the message names the file and line).
PatchError: one or more patches cannot be applied; the message is the full analysis, naming each failing
patch file and source file, and the tree is left as it was.
"""

from __future__ import annotations

from toolkit.util.errors import ToolkitError


class SeriesError(ToolkitError):
    """A series file is malformed: the message names the series file and the line."""


class PatchError(ToolkitError):
    """A patch series does not apply (or cannot be refreshed); the tree was not changed."""
