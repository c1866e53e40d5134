"""What reads or writes a work tree after its stages (the smoke, a release entry's wheel and provenance, the
survey's configure) is done before the tree's lock is let go: a second build of the same tree started meanwhile
waits for it. The first build runs in a thread of this process; the second as a user starts it, a process of its
own (`python -m toolkit build`, waiting for the lock); the lock is the real one."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.tools import ROOT
from toolkit.cli.main import main

TIMEOUT = 600


def toolkit_build(build_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "toolkit", "build", "--build-dir", str(build_dir), *args]


class Held:
    """A step the first build is held in: `step` runs the real step (`real`; None: its work is stood in for,
    returning `result`), says the first build is inside, and waits until `leave` is set."""

    def __init__(self, real: Callable[..., Any] | None, result: object = None):
        self.real, self.result = real, result
        self.inside, self.leave = threading.Event(), threading.Event()

    def step(self, *args: object, **kwargs: object) -> object:
        result = self.real(*args, **kwargs) if self.real else self.result
        self.inside.set()
        self.leave.wait(timeout=TIMEOUT)
        return result


def says_it_waits(second: subprocess.Popen[bytes], err: Path) -> bool:
    """Whether the second build says it waits for the lock before it ends."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if "waiting for" in err.read_text():
            return True
        if second.poll() is not None:
            return False
        time.sleep(0.1)
    return False


def second_waits(held: Held, first: Callable[[], object], build_dir: Path, err: Path, *args: str) -> object:
    """Run `first` in a thread until it is held in the step; start the second build of the same tree, which must
    say it waits and still be waiting; let the first go; the second then builds. Returns the first's outcome."""
    outcome: list[object] = []

    def run_first() -> None:
        try:
            outcome.append(first())
        except BaseException as exc:  # said below, in the test's thread
            outcome.append(exc)
        finally:
            held.inside.set()

    thread = threading.Thread(target=run_first)
    thread.start()
    second: subprocess.Popen[bytes] | None = None
    try:
        assert held.inside.wait(timeout=TIMEOUT) and not outcome, f"the first build never reached the step: {outcome}"
        with err.open("w") as stderr:
            second = subprocess.Popen(toolkit_build(build_dir, *args), cwd=ROOT, stdout=subprocess.DEVNULL,
                                      stderr=stderr)
        assert says_it_waits(second, err), err.read_text()
        assert second.poll() is None, f"the second build ended while the first was in the step:\n{err.read_text()}"
    finally:
        held.leave.set()
        thread.join(timeout=TIMEOUT)
        if second is not None and second.wait(timeout=TIMEOUT) != 0:
            pytest.fail(f"the second build failed:\n{err.read_text()}")
    return outcome[0]


def test_a_second_build_waits_while_the_first_is_smoke_testing(monkeypatch, tmp_path):
    # The smoke itself installs onnxruntime from an index: its driver is stood in for, the smoke adapter is real.
    held = Held(None, result=0)
    monkeypatch.setattr("toolkit.smoke.run.run_smoke", held.step)
    first = second_waits(held, lambda: main(["build", "--smoke", "--build-dir", str(tmp_path)]), tmp_path,
                         tmp_path / "second.err")
    assert first == 0


def test_a_second_build_waits_while_the_survey_configures_and_reads_the_tree(monkeypatch, tmp_path):
    import toolkit.upstream.survey as survey

    # Held once the survey's real configure has run and its requests are read; the rest is read after.
    held = Held(survey.read_survey)
    monkeypatch.setattr(survey, "read_survey", held.step)
    out = tmp_path / "survey.json"
    first = second_waits(held, lambda: main(["survey", "--build-dir", str(tmp_path), "--out", str(out)]), tmp_path,
                         tmp_path / "second.err")
    assert first == 0
    assert '"fetchcontent"' in out.read_text()


def test_a_second_build_cannot_change_the_wheel_and_provenance_a_release_entry_handed_back(tmp_path):
    """The entry's build hands its wheel and facts to the release and lets go of its tree; a second build of that
    tree at once (one without the entry's local version label, which replaces the tree's wheelhouse) must leave
    the release the wheel the entry built."""
    from toolkit.recipe.load import PROJECT_ROOT, find_recipe
    from toolkit.release.make_release import pipeline_builder
    from toolkit.release.matrix import plan_matrix
    from toolkit.release.orchestrator import run_release
    from toolkit.release.request import load_settings

    recipe = find_recipe("amdgpu-ep", PROJECT_ROOT)
    entry = next(e for e in plan_matrix(load_settings(recipe)) if not e.features)
    build_dir = tmp_path / "build"
    build_entry = pipeline_builder(recipe, no_wait=False, overrides={"build_folder": build_dir}, env={})
    seconds: list[subprocess.CompletedProcess[str]] = []

    def build(e: Any, work: Path) -> tuple[Path, Any]:
        wheel, facts = build_entry(e, work)
        seconds.append(subprocess.run(toolkit_build(build_dir, "--wheel", "--force", "--variant", f"release-{e.id}"),
                                      cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT))
        return wheel, facts

    result = run_release([entry], build, tmp_path / "dist", toolchain={}, env={})
    assert seconds[0].returncode == 0, seconds[0].stderr
    assert len(result.wheels) == 1 and f"+{entry.local_version}-" in result.wheels[0].name, result.wheels
