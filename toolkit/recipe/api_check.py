"""A recipe's [api_check]: which system libraries' APIs the tree's calls are checked against, after configure
and before the compile (the api-check stage), and by `bump` on a new revision.

    [api_check]
    libraries = ["migraphx", "hip", "ort"]   # keys of toolkit/apicheck/data/system_apis.toml
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.recipe.schema import doc, recipe_table
from toolkit.util.tomlread import Table


@recipe_table("api_check")
@dataclass(frozen=True)
class ApiCheckSettings:
    libraries: tuple[str, ...] = field(metadata=doc(
        "Libraries checked: keys of `toolkit/apicheck/data/system_apis.toml` (`migraphx`, `hip`, `ort`, `miopen`)."))

    @classmethod
    def from_table(cls, t: Table, recipe_dir: Path) -> ApiCheckSettings:
        from toolkit.apicheck.apis import load_libraries

        known, _ = load_libraries()
        libraries = tuple(t.str_list("libraries"))
        for i, key in enumerate(libraries):
            if key not in known:
                raise t.error(f"libraries[{i}]", f"expected one of {', '.join(known)}, got {key!r}")
        if not libraries:
            raise t.error("libraries", "name at least one library (or remove [api_check])")
        t.done()
        return cls(libraries)


def from_table(t: Table, recipe_dir: Path) -> ApiCheckSettings:
    return ApiCheckSettings.from_table(t, recipe_dir)
