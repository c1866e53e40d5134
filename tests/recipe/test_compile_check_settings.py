"""[compile_check] from a recipe: a dep's `protoc` entries are .proto paths in its tree, refused otherwise at the
recipe's reading (they are handed to protoc as arguments, never to a shell)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.tools import ROOT

_DEP = ('[[compile_check.dep]]\nname = "onnx"\nurl = "https://example.invalid/onnx.tar.gz"\n'
        'sha256 = "' + "0" * 64 + '"\nprotoc = [{protoc}]\n')


def _recipe(tmp_path, protoc: str):
    tree = tmp_path / "src"
    tree.mkdir(exist_ok=True)
    (tree / "a.cu").write_text("__global__ void k() {}\n")
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'[recipe]\nname = "r"\nstages = ["hipify", "compile-check"]\n[source]\npath = "{tree}"\n'
                      '[hipify]\ninclude = ["**/*.cu"]\n[compile_check]\ntargets = ["gfx942"]\nunits = ["**/*.cu"]\n'
                      + _DEP.format(protoc=protoc))
    return recipe


def _dry_run(recipe) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", "compile-check", "--recipe", str(recipe), "--dry-run"],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=300)


@pytest.mark.parametrize("bad", ["onnx/onnx-ml.proto; touch PWNED", "$(touch PWNED).proto", "../up.proto",
                                 "-I/etc/x.proto", "/abs/x.proto", "onnx/onnx-ml.proto'", "onnx/readme.txt"])
def test_a_protoc_entry_that_is_not_a_proto_path_is_refused_in_one_line(tmp_path, bad):
    recipe = _recipe(tmp_path, f'"onnx/onnx-ml.proto", "{bad}"')
    proc = _dry_run(recipe)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"error: {recipe}: key 'compile_check.dep") and "protoc[1]'" in first, proc.stderr
    assert "not a relative path to a .proto file" in first and "Traceback" not in proc.stderr
    assert not (tmp_path / "PWNED").exists() and not (ROOT / "PWNED").exists()


def test_proto_paths_are_read_as_given(tmp_path):
    from toolkit.recipe.load import load_recipe

    recipe = load_recipe(str(_recipe(tmp_path, '"onnx/onnx-ml.proto", "onnx/onnx-data.proto"')))
    assert recipe.compile_check is not None
    assert recipe.compile_check.deps[0].protoc == ("onnx/onnx-ml.proto", "onnx/onnx-data.proto")
