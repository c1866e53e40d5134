"""The wheels the documentation names are the ones the recipes build: a platform wheel is named by a
distribution a recipe builds (the real tree's carries its ROCm or platform variant, `-rocm6`, `-directml`), and the bare
`onnxruntime-ep-amdgpu` is only ever called the meta-package (or AMD's placeholder on PyPI)."""

from __future__ import annotations

import re

from tests.support.doc_commands import documentation_pages
from tests.support.tools import ROOT
from toolkit.recipe.load import load_recipe


def distributions() -> tuple[set[str], set[str]]:
    """(the distributions recipes build as platform wheels, the meta-packages above ROCm variants)."""
    built, meta = set(), set()
    for path in sorted((ROOT / "recipes").glob("*.toml")):
        if path.name.endswith(".lock.toml"):
            continue
        wheel = load_recipe(path).wheel
        if wheel is None:
            continue
        names = {wheel.distribution}
        if wheel.rocm_variants:
            meta.add(wheel.distribution)
            names = {f"{wheel.distribution}-{variant}" for variant in wheel.variant_names}
        # A named feature's build (--with-hipdnn) is a distribution of its own: <name>-hipdnn.
        built.update(names, (f"{name}-{feature}" for name in names for feature in wheel.named_features))
    return built, meta


def sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.;:])\s+(?=[A-Z(`])", " ".join(text.split()))


def test_documented_wheel_names_are_built_ones():
    built, meta = distributions()
    assert {"onnxruntime-ep-amdgpu-rocm6", "onnxruntime-ep-amdgpu-rocm7-hipdnn"} <= built
    assert meta == {"onnxruntime-ep-amdgpu"}
    wrong = []
    for page in documentation_pages():
        where = page.relative_to(ROOT).as_posix()
        for sentence in sentences(page.read_text(encoding="utf-8")):
            for name in re.findall(r"`(onnxruntime-ep-amdgpu[a-z0-9-]*)`", sentence):
                if name in meta and not re.search(r"meta|placeholder", sentence):
                    wrong.append(f"{where}: `{name}` is the meta-package, not a wheel the build makes: {sentence}")
                elif name not in built | meta:
                    wrong.append(f"{where}: no recipe builds `{name}`")
            for dist in re.findall(r"\b(onnxruntime_ep_amdgpu[a-z0-9_]*)-[0-9X.*]+-py3-none-(?:many)?linux", sentence):
                if dist.replace("_", "-") not in built:
                    wrong.append(f"{where}: the wheel `{dist}-...` is no distribution a recipe builds")
    assert wrong == []
