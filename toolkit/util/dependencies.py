"""A third-party module the toolkit imports that this Python lacks: the toolkit is fine, the Python running it is not
the environment it was installed into (the system's Python, typically). That is said as one error naming the module,
the dependency that provides it and the command that installs it, not as an internal error (a bug).

Only the standard library is imported here: this runs when a dependency is missing.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from toolkit.util.errors import RUN_TOOLKIT, ToolkitError

DISTRIBUTION = "ort-amdgpu-toolkit"
# Import names whose distribution is spelled otherwise (the rest are spelled alike, up to case, '-' and '_');
# keyring and urllib3 come with twine and requests, which the toolkit declares and which use them.
PROVIDED_BY = {"elftools": "pyelftools", "cyclonedx": "cyclonedx-python-lib", "keyring": "twine", "urllib3": "requests"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared_requirements() -> list[str]:
    """The toolkit's own dependencies (not its extras'): from its installed metadata, else from the pyproject.toml of
    the source tree it runs from (`python -m toolkit` in the project, nothing installed)."""
    try:
        found = metadata.requires(DISTRIBUTION) or []
        return [r for r in found if "extra ==" not in r.partition(";")[2]]
    except metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return []
    return list(project.get("dependencies", [])) if project.get("name") == DISTRIBUTION else []


def declared(module: str) -> str | None:
    """The declared requirement (`pyelftools>=0.31`) that provides the top-level `module`, or None."""
    wanted = _normal(PROVIDED_BY.get(module, module))
    for requirement in _declared_requirements():
        name = _NAME.match(requirement.strip())
        if name is not None and _normal(name.group(0)) == wanted:
            return requirement.partition(";")[0].strip()
    return None


def missing_dependency(exc: ModuleNotFoundError) -> ToolkitError | None:
    """The error for a declared dependency this Python lacks; None for any other module (an undeclared import is
    a bug in the toolkit)."""
    module = (exc.name or "").partition(".")[0]
    requirement = declared(module) if module else None
    if requirement is None:
        return None
    python = sys.executable or "python3"
    if sys.prefix != sys.base_prefix:
        hint = (f"install it: `{python} -m pip install '{requirement}'` (or, in the project, `{python} -m pip "
                "install -e .` for every dependency)")
    else:
        # Outside a venv pip may not install (PEP 668, Debian and Ubuntu): the environment nox makes has them all.
        hint = (f"run the toolkit with the environment nox makes, `{RUN_TOOLKIT} ...` (`nox -s tests -- tests/project "
                "-q` makes .nox/toolkit), or install the toolkit in a venv: `python3 -m venv VENV && VENV/bin/python "
                "-m pip install -e .`")
    return ToolkitError(f"this Python ({python}) lacks the module {module}, from the toolkit's dependency "
                        f"{requirement}", hint=hint)
