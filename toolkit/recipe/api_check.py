"""A recipe's [api_check]: which system libraries' APIs the tree's calls are checked against, after configure
and before the compile (the api-check stage), and by `bump` on a new revision.

    [api_check]
    libraries = ["migraphx", "hip", "ort"]   # keys of toolkit/apicheck/data/system_apis.toml
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolkit.util.tomlfields import doc
from toolkit.util.tomlread import Site


def _known_library(key: str, site: Site) -> None:
    # The libraries are the data file's tables: read where a recipe names one, not when the recipe module loads.
    from toolkit.apicheck.apis import load_libraries

    known, _ = load_libraries()
    if key not in known:
        raise site.error(f"expected one of {', '.join(known)}, got {key!r}")


def _some(libraries: tuple[str, ...], site: Site) -> None:
    if not libraries:
        raise site.error("name at least one library (or remove [api_check])")


@dataclass(frozen=True)
class ApiCheckSettings:
    libraries: tuple[str, ...] = field(metadata=doc(
        "Libraries checked: keys of `toolkit/apicheck/data/system_apis.toml` (`migraphx`, `hip`, `ort`, `miopen`).",
        each=_known_library, check=_some))
