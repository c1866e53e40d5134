"""ORT 1.22.1's ROCm EP recipe as data: exclusions with reasons, fix-ups, the overlay, the compile-check sample.

The end-to-end compile of the sample (`python -m toolkit compile-check --recipe onnxruntime-rocm-ep --engine both
--sample`) is not in CI yet: the build root lacks rocm_smi, roctracer and rocThrust headers that ORT's
hand-written ROCm files include, so it compiles 7 of 141 units today (issue 12 stays open).
"""

from __future__ import annotations

from pathlib import Path

from toolkit.recipe import load_recipe

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "recipes" / "onnxruntime-rocm-ep.toml"


def test_recipe_is_data_with_reasons_and_a_sample_of_at_least_30_units():
    recipe = load_recipe(RECIPE)
    hip, cc = recipe.extra["hipify"], recipe.extra["compile_check"]
    assert all(e.reason.strip() for e in hip.exclude) and len(hip.exclude) >= 50
    assert hip.overlay and any(s.from_ == "kCudaExecutionProvider" for s in hip.substitutions)
    assert cc.targets == ("gfx942",) and len(cc.sample) >= 30
    areas = {u.split("providers/rocm/")[1].split("/")[0] for u in cc.sample}
    assert {"math", "reduction", "tensor", "nn", "activation"} <= areas
    assert any(u.count("/") == 4 and u.endswith(".cc") for u in cc.sample)  # the EP's own .cc files
