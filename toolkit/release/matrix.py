"""The release matrix: the product of the recipe's axes (Python versions, GPU target sets, toolchains, feature
sets), one entry per wheel.

Planning is kept apart from building so a CI system can ask for the matrix (`--print-matrix`), fan the
entries out across machines, and have each machine build one entry (`--only ID`). A host-only py3-none wheel
(AMD's real umbrella) has no Python or GPU-target axis: its entries are toolchain x features.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, replace

from toolkit.recipe.core import TOOLCHAIN_PLATFORMS
from toolkit.recipe.release import ReleaseSettings, RocmSet, TargetSet, ToolchainSet
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON


@dataclass(frozen=True)
class Entry:
    id: str                      # e.g. cp311-gfx90a_gfx942-hipdnn, rocm7-glibc2.28-hipdnn
    python: str | None           # "3.11"; None: no Python axis (a py3-none wheel)
    target_set: str | None       # the set's name; None: no GPU-target axis
    gpu_targets: tuple[str, ...]
    features: tuple[str, ...]
    toolchain: ToolchainSet | None = None
    rocm: RocmSet | None = None  # the ROCm variant and the build root that builds it
    public: bool = False         # released under the plain version ([release] public names its label)

    @property
    def root(self) -> str | None:
        """The build root whose container builds it: its ROCm variant's, else its toolchain set's (None: here)."""
        if self.rocm is not None:
            return self.rocm.root
        return self.toolchain.root if self.toolchain is not None else None

    @property
    def python_tag(self) -> str | None:
        return "cp" + self.python.replace(".", "") if self.python else None

    @property
    def label(self) -> str:
        """The wheel's local version label: the axes other than Python and ROCm (the distribution's name carries
        the ROCm variant), so entries never share a wheel name."""
        parts = [self.target_set, self.toolchain.name if self.toolchain else None, *self.features]
        return ".".join(p for p in parts if p).lower().replace("+", ".").replace("-", ".") or "base"

    @property
    def local_version(self) -> str | None:
        """The label the wheel's version carries (VERSION+LABEL), or None for the public entries."""
        return None if self.public else self.label

    def to_json(self) -> JSON:
        out = {
            "id": self.id,
            "python": self.python,
            "python_tag": self.python_tag,
            "target_set": self.target_set,
            "gpu_targets": list(self.gpu_targets),
            # CMake and hipcc take target lists separated by ';'
            "gpu_targets_cmake": ";".join(self.gpu_targets),
            "features": list(self.features),
            "args": ["--only", self.id],
            "public": self.public,
        }
        if self.toolchain is not None:
            out.update(toolchain=self.toolchain.toolchain, toolchain_name=self.toolchain.name,
                       glibc_floor=self.toolchain.glibc_floor)
        if self.rocm is not None:
            out.update(rocm=self.rocm.name)
        if self.root is not None:
            out.update(root=self.root)
        return out


def entry_id(python: str | None, target_set: str | None, features: tuple[str, ...],
             toolchain: str | None = None, rocm: str | None = None) -> str:
    parts = [p for p in ("cp" + python.replace(".", "") if python else None, target_set, rocm, toolchain) if p]
    if features:
        parts.append("+".join(features))
    return "-".join(parts) or "base"


def _entry(python: str | None, target_set: TargetSet | None, rocm: RocmSet | None, chain: ToolchainSet | None,
           features: tuple[str, ...]) -> Entry:
    name = target_set.name if target_set else None
    id_ = entry_id(python, name, features, chain.name if chain else None, rocm.name if rocm else None)
    return Entry(id_, python, name, target_set.targets if target_set else (), features, chain, rocm)


def plan_matrix(settings: ReleaseSettings) -> list[Entry]:
    pythons: tuple[str | None, ...] = settings.python if "python" in settings.axes else (None,)
    sets: tuple[TargetSet | None, ...] = settings.target_sets if "target_set" in settings.axes else (None,)
    chains: tuple[ToolchainSet | None, ...] = settings.toolchains if "toolchain" in settings.axes else (None,)
    rocms: tuple[RocmSet | None, ...] = settings.rocm if "rocm" in settings.axes else (None,)
    entries = []
    for python, target_set, rocm, chain in itertools.product(pythons, sets, rocms, chains):
        # ROCm is Linux's: another OS's entries are built once, without a ROCm variant.
        other_os = chain is not None and TOOLCHAIN_PLATFORMS[chain.toolchain] != "linux"
        if other_os and rocm is not rocms[0]:
            continue
        feature_sets = chain.features if chain is not None and chain.features is not None else settings.features
        entries += [_entry(python, target_set, None if other_os else rocm, chain, f) for f in feature_sets]
    # Linux's entries first, as the ROCm axis orders them; another OS's after.
    entries.sort(key=lambda e: e.toolchain is not None and TOOLCHAIN_PLATFORMS[e.toolchain.toolchain] != "linux")
    labels = sorted({e.label for e in entries})
    for label in settings.public:
        if label not in labels:
            raise ToolkitError(f"[release] public = {label!r}: no matrix entry has that label",
                               hint=f"the entries' labels: {', '.join(labels)}")
    entries = [replace(e, public=e.label in settings.public) for e in entries]
    return entries


def select(entries: list[Entry], only: list[str] | None) -> list[Entry]:
    """The entries named in `only` (all when None), in matrix order; unknown ids are an error."""
    if not only:
        return list(entries)
    by_id = {e.id: e for e in entries}
    unknown = [i for i in only if i not in by_id]
    if unknown:
        raise ToolkitError(f"--only {unknown[0]}: no such matrix entry",
                           hint="known entries: " + ", ".join(by_id) + " (see --print-matrix)")
    wanted = set(only)
    return [e for e in entries if e.id in wanted]


def matrix_json(entries: list[Entry]) -> str:
    """GitHub Actions-style `{"include": [...]}`: usable as `strategy.matrix` via fromJSON()."""
    return json.dumps({"include": [e.to_json() for e in entries]}, indent=2) + "\n"
