"""What a build's stages hand the stages after them, and the step after the stages (stages.build_then).

The Build holds a build's inputs only. What the stages work out from them is made once, by the stage that owns
it, when that stage ran, was skipped as up to date, or (dry run) planned: the source tree's digest by the source
stage, the CMake defines and the build facts by the configure stage. The runner calls each stage's `done` in order,
so a later stage reads them here instead of working them out again."""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.util.errors import ToolkitError
from toolkit.wheel.facts import BuildFacts


@dataclass(frozen=True)
class Configured:
    """What the configure stage used: every -D it passed (in a dry run: would pass), and the build facts."""

    defines: dict[str, str]
    facts: BuildFacts


@dataclass
class Produced:
    """Filled in stage order by the stages of one run; never part of the Build."""

    source_digest: str | None = None
    configured: Configured | None = None

    def digest(self, stage: str) -> str:
        if self.source_digest is None:
            raise ToolkitError(f"the {stage} stage needs the source stage's digest of the tree, and the source "
                               "stage has not run in this build")
        return self.source_digest

    def configure(self, stage: str) -> Configured:
        if self.configured is None:
            raise ToolkitError(f"the {stage} stage needs the configure stage's defines and build facts, and this "
                               "build has no configure stage",
                               hint="add 'configure' to the recipe's [recipe] stages, or stop before this stage")
        return self.configured
