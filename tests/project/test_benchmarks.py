"""Every benchmark still imports: they are run by hand, not in CI, so a moved helper would break one unseen.
Importing runs their top-level imports only (each runs its measurement under `if __name__ == "__main__"`)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.support.tools import ROOT

BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))


def test_there_are_benchmarks():
    assert len(BENCHMARKS) >= 10, BENCHMARKS


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_imports(path, monkeypatch):
    assert 'if __name__ == "__main__"' in path.read_text(encoding="utf-8"), f"{path.name} runs when imported"
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location(f"benchmark_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
