"""The dependency provider's survey mode, as Python sees it (provider.cmake writes, this reads).

With TOOLKIT_PROVIDER_SURVEY set to a file, the provider writes one line per FetchContent request with what
the tree declared for it (FetchContent_Declare's arguments, which CMake hands the provider) and serves a name
the recipe lacks from an empty stand-in, so a single configure of a new revision says which dependencies it
declares, at which URL or git tag. `python -m toolkit survey` and `bump` use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SURVEY_NAME = "toolkit-provider-survey.txt"
DEFINE = "TOOLKIT_PROVIDER_SURVEY"
# FetchContent_Declare keywords whose value says which version a dependency is.
_VALUED = ("URL", "GIT_REPOSITORY", "GIT_TAG", "URL_HASH", "SOURCE_SUBDIR")


@dataclass(frozen=True)
class Request:
    """One FetchContent request the configure made, with what the tree declared for it."""

    name: str  # lower case, as the provider's map keys it
    served: bool  # False: the recipe lacks it and an empty stand-in was given
    details: tuple[str, ...]  # FetchContent_Declare's arguments as CMake handed them over

    def value(self, keyword: str) -> str | None:
        for i, item in enumerate(self.details[:-1]):
            if item == keyword:
                return self.details[i + 1]
        return None

    @property
    def url(self) -> str | None:
        """The archive URL (the first, where several are listed) or the git repository."""
        return self.value("URL") or self.value("GIT_REPOSITORY")

    @property
    def tag(self) -> str | None:
        return self.value("GIT_TAG")

    def declared(self) -> dict[str, str]:
        return {k: v for k in _VALUED if (v := self.value(k)) is not None}


def survey_define(binary_dir: Path) -> dict[str, str]:
    """The define that turns survey mode on for a configure into binary_dir."""
    return {DEFINE: (Path(binary_dir) / SURVEY_NAME).as_posix()}


def read_survey(binary_dir: Path) -> list[Request]:
    """Every request of the last survey configure into binary_dir, in the order CMake made them."""
    path = Path(binary_dir) / SURVEY_NAME
    if not path.is_file():
        return []
    out: dict[str, Request] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, state, *details = line.split("\t")
        if name and name not in out:
            out[name] = Request(name, state == "served", tuple(d for d in details if d))
    return list(out.values())
