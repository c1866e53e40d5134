"""One exception type for every failure a user can act on, and the exit codes of every command.

Every stage raises ToolkitError with the thing that is wrong (file, key, URL, patch, hunk) and what to
do about it; the CLI prints it without a traceback and exits 2, or 1 for a CheckFailed (a check that ran and
said no). Anything else that escapes a command is a bug: one `error: internal error` line, exit 3.
"""

from __future__ import annotations

# How a hint spells a toolkit command: as it runs when printed, from the project folder after README's set-up
# (the system's Python lacks the toolkit's dependencies, so a bare `python -m toolkit` would not).
RUN_TOOLKIT = ".nox/toolkit/bin/python -m toolkit"


EXIT_CHECK_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
# Every command's exit codes, in docs/reference/commands.md (generated from this table).
EXIT_CODES = {
    0: "done; a check or a verdict passed",
    EXIT_CHECK_FAILED: "a check failed: the command ran to its verdict and it is no (`--check` modes, `bump` that "
                       "needs a person, `compile-check` below its rate, a build whose check or compile-check stage "
                       "refuses what was built, a smoke test that fails); what failed is printed",
    EXIT_INPUT: "the input is wrong or cannot be used: an option (argparse's usage errors too), a recipe, a file, a "
                "source, an index or a tool that fails on them, or a Python that lacks one of the toolkit's "
                "dependencies; one `error:` line names it, with a hint",
    EXIT_INTERNAL: "internal error: a bug in the toolkit; the `error: internal error` line names the exception, "
                   "`-v` adds the traceback",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C), said once as `error: interrupted`",
}


class ToolkitError(Exception):
    """A failure with a message for the user and, optionally, a hint saying what to do."""

    exit_code = EXIT_INPUT

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class CheckFailed(ToolkitError):
    """A check that ran and said no (the libraries' exports, their code objects, units failing to compile): the
    command exits 1, the input itself being fine to read."""

    exit_code = EXIT_CHECK_FAILED


class RecipeError(ToolkitError):
    """A recipe file is malformed: the message names the file and the key."""
