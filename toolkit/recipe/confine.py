"""Where the files a recipe names may be: inside the project, the recipe's own folder, or the toolkit cache.

A recipe is data someone else may have written. Its paths (the patch series, `extends`, a `[source] path`)
are resolved (links followed, `..` folded) and must land in one of those folders (a recipe in a folder named
`recipes` also reaches that folder's parent: its project); `/proc`, `/sys` and `/dev`
never, wherever the recipe sits. Otherwise a recipe could make the toolkit read `/proc/self/environ` (the
process environment, CI tokens included) or `/etc/passwd` and quote it back in an error line.
"""

from __future__ import annotations

from pathlib import Path

from toolkit.util.errors import RecipeError
from toolkit.util.redact import shorten

PROJECT = Path(__file__).resolve().parents[2]
_NEVER = (Path("/proc"), Path("/sys"), Path("/dev"))


def allowed_roots(recipe_dir: Path) -> list[Path]:
    """The toolkit's project, the recipe's folder (not when that is `/`), the recipe's own project (the folder
    holding a `recipes/` folder the recipe is in: the layout recipes/, patches/, samples/ side by side, as in a
    copy of this checkout) and the toolkit cache."""
    roots = [PROJECT]
    try:
        from toolkit.util.cachedir import default_cache_dir  # platformdirs: absent in a bare container

        roots.append(default_cache_dir().resolve())
    except ImportError:
        pass
    here = Path(recipe_dir).resolve()
    if here != Path("/"):
        roots.append(here)
    if here.name == "recipes" and here.parent != Path("/"):
        roots.append(here.parent)
    return roots


def confined(path: Path, recipe_dir: Path, what: str) -> Path:
    """`path` resolved, if it lies in an allowed folder; else a RecipeError naming `what` (file and key)."""
    resolved = Path(path).resolve()
    if any(resolved == never or resolved.is_relative_to(never) for never in _NEVER):
        raise RecipeError(f"{what}: {shorten(resolved, 200)} is a system folder (/proc, /sys, /dev); a recipe names "
                          "files inside the project, its own folder or the toolkit cache")
    if not any(resolved.is_relative_to(root) for root in allowed_roots(recipe_dir)):
        raise RecipeError(f"{what}: {shorten(resolved, 200)} is outside the project, the recipe's folder "
                          f"({recipe_dir}) and the toolkit cache; a recipe names only files there (copy it next to "
                          "the recipe, or give a source tree with --source PATH)")
    return resolved
