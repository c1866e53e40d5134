"""What reads or writes a work tree after its stages (the smoke, a release entry's provenance, the survey) runs
before the tree's lock is let go: a second build of the same tree started meanwhile is refused (--no-wait) or
waits. Each test holds the first build inside that step, starts the second as a user would, and lets go."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.cli.main import main


def second_build(build_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", "build", "--no-wait", "--build-dir", str(build_dir),
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def held_in(monkeypatch: pytest.MonkeyPatch, module: str, name: str, first: Callable[[], object],
            build_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `first` in a thread with `module.name` replaced by a step that waits; start the second build while the
    first is in it; let it go. Returns the second build's outcome."""
    inside, leave = threading.Event(), threading.Event()

    def step(*args: object, **kwargs: object) -> int:
        inside.set()
        leave.wait(timeout=600)
        return 0

    monkeypatch.setattr(f"{module}.{name}", step)
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(first()))
    thread.start()
    try:
        assert inside.wait(timeout=600), "the first build never reached the step"
        return second_build(build_dir, *args)
    finally:
        leave.set()
        thread.join(timeout=600)


def test_a_second_build_cannot_start_while_the_first_is_smoke_testing(monkeypatch, tmp_path):
    second = held_in(monkeypatch, "toolkit.pipeline.adapters.smoke", "smoke",
                     lambda: main(["build", "--smoke", "--build-dir", str(tmp_path)]), tmp_path)
    assert second.returncode != 0
    assert "is in use by" in second.stderr, second.stderr


def test_a_second_build_cannot_start_while_the_survey_configures(monkeypatch, tmp_path):
    second = held_in(monkeypatch, "toolkit.upstream.survey", "_survey",
                     lambda: main(["survey", "--build-dir", str(tmp_path)]), tmp_path)
    assert second.returncode != 0
    assert "is in use by" in second.stderr, second.stderr


def test_a_second_build_cannot_start_while_a_release_entry_reads_its_provenance(monkeypatch, tmp_path):
    from toolkit.recipe.load import PROJECT_ROOT, find_recipe
    from toolkit.release.entry import build_release_entry
    from toolkit.release.matrix import plan_matrix
    from toolkit.release.request import load_settings

    recipe = find_recipe("amdgpu-ep", PROJECT_ROOT)
    entry = next(e for e in plan_matrix(load_settings(recipe)) if not e.features)
    second = held_in(monkeypatch, "toolkit.release.entry", "_entry_facts",
                     lambda: build_release_entry(recipe, entry, tmp_path, overrides={"build_folder": tmp_path}),
                     tmp_path, "--variant", f"release-{entry.id}")
    assert second.returncode != 0
    assert "is in use by" in second.stderr, second.stderr
