"""ORT 1.22.1's ROCm EP recipe end to end: the recipe's source (upstream's tag archive, content-pinned, served
as a subset from the artifact mirror over file://) hipified by both engines, then the recipe's fixed sample
of translation units compiled with the build root's hipcc for gfx942, both rates printed. CI runs it (never
skipped under CI=true). The whole
tree (141 units) is `python -m toolkit compile-check --recipe onnxruntime-rocm-ep --engine both` and
benchmarks/hipify_ort.py; its 282 compiles are too many for every CI run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.tools import ROOT, require_tool
from toolkit.recipe.load import load_recipe

RECIPE = ROOT / "recipes" / "onnxruntime-rocm-ep.toml"
ARCHIVE = "mirror/github.com/microsoft/onnxruntime/archive/refs/tags/v1.22.1.tar.gz"


def upstream() -> Path:
    """The offline upstream folder (../shared/upstream beside the checkout; TOOLKIT_UPSTREAM overrides)."""
    candidates = [os.environ.get("TOOLKIT_UPSTREAM", "")] + [str(p / "shared" / "upstream") for p in ROOT.parents]
    for c in candidates:
        if c and (Path(c) / ARCHIVE).is_file():
            return Path(c)
    require_tool(False, f"no shared/upstream/{ARCHIVE} beside the checkout (set TOOLKIT_UPSTREAM)")
    raise AssertionError


def test_recipe_is_data_with_reasons_and_a_sample_of_at_least_30_units():
    recipe = load_recipe(RECIPE)
    hip, cc = recipe.hipify, recipe.compile_check
    assert all(e.reason.strip() for e in hip.exclude) and len(hip.exclude) >= 50
    assert hip.overlay and any(s.from_ == "kCudaExecutionProvider" for s in hip.substitutions)
    assert cc.targets == ("gfx942",) and len(cc.sample) >= 30
    areas = {u.split("providers/rocm/")[1].split("/")[0] for u in cc.sample}
    assert {"math", "reduction", "tensor", "nn", "activation"} <= areas
    assert any(u.count("/") == 4 and u.endswith(".cc") for u in cc.sample)  # the EP's own .cc files


def test_the_worked_example_hipifies_its_pinned_source_with_no_dead_substitution(tmp_path: Path):
    """`nox -s hipify -- --recipe onnxruntime-rocm-ep --mirror ...` (the recipe's comment's command, built-in
    engine): every [[hipify.substitute]] of the recipe that applies to the engine changes some file."""
    up = upstream()
    cmd = [sys.executable, "-m", "toolkit", "build", "--until", "hipify", "--recipe", str(RECIPE), "--build-dir",
           str(tmp_path / "build"), "--mirror", (up / "mirror").as_uri()]
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "stages run: source, hipify" in proc.stderr
    assert "warning:" not in proc.stderr and "matched nothing" not in proc.stderr, proc.stderr[-3000:]


def test_sample_compiles_from_both_engines(sid_root: Path, tmp_path: Path):
    up = upstream()
    env = {**os.environ, "TOOLKIT_BUILDROOT": str(sid_root)}
    # No rate: the recipe's expected failures (each with its reason) are the units allowed to fail.
    cmd = [sys.executable, "-m", "toolkit", "compile-check", "--recipe", str(RECIPE), "--engine", "both",
           "--sample", "--build-dir", str(tmp_path / "build"), "--mirror", (up / "mirror").as_uri()]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    print(proc.stdout[-6000:])
    print(proc.stderr[-3000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "matched nothing" not in proc.stderr  # with either engine, each rule that applies to it is used
    rates = {}
    for engine in ("builtin", "hipify-perl"):
        report = json.loads((tmp_path / "build/onnxruntime-rocm-ep" / engine / "compile-check.json").read_text())
        assert report["units"] >= 30
        # Headers at ORT's pins, from the mirror: no Debian fallback in this run.
        assert all(": pinned " in line for line in report["headers"]), report["headers"]
        for r in report["results"]:
            assert r["ok"] or re.match(r"^\S+:\d+(:\d+)?: ", r["error"]), r
        rates[engine] = report["rate"]
        assert re.search(rf"^{re.escape(engine)}\s.*{report['compiled']}/{report['units']}", proc.stdout, re.M)
    assert rates["builtin"] >= 0.9
    assert rates["builtin"] >= rates["hipify-perl"]
