"""A pytest plugin: the suite's slowest builds start in the background as the session starts, and the tests that
use them run last.

The builds are hip-ep in the ROCm 7 root and AMD's real tree in each ROCm root, the commands their fixtures run
(tests/hip_ep/conftest.py, tests/hip_ep/test_umbrella.py, tests/real_umbrella/conftest.py). On a machine with an
empty cache they are most of an hour of compiling on 2 cores: run side by side at the lowest priority, they take
what the other tests leave of the cores (pip, podman and Wine wait as much as they compute), where they used to add
their own hour when their first test asked. When a fixture asks for its build,
the toolkit's work-tree lock makes it wait for the background one, which it then finds done; a build that failed in
the background is built again by its fixture, which reports why. Nothing starts for a run that needs none of them,
or needs nothing else (nothing to overlap), or whose roots are not made yet (the fixtures make them).

`python -m tests.support.prebuild NAME...` is the background process: it runs the named builds in order.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.support.tools import ROOT

# Fixture -> the builds a test using it waits for, in the order it needs them. hip_ep/test_umbrella.py builds the
# real tree of the ROCm 7 root beside hip-ep's. (real_build, parametrized by root, is read in builds().)
USES = {"hipep": ("hip-ep", "real-rocm7")}
# Run last, in pytest's order: the tests of the builds above, the real tree's tests (rocm_root) together with their
# build, and the real tree's release (release_roots), whose containers compile the units the real builds compiled,
# with the same toolchain and flags: after those builds ccache answers them (a second real build is about a minute),
# where side by side both would compile everything.
DEFERRED = ("hipep", "real_build", "rocm_root", "release_roots")


class Background(NamedTuple):
    proc: subprocess.Popen[bytes]
    names: list[str]
    log: Path


RUNNING: list[Background] = []   # this session's background process (a test of this plugin waits on it)


def builds(item: pytest.Item) -> list[str]:
    used = set(getattr(item, "fixturenames", ()))
    names = [name for fixture, names in USES.items() if fixture in used for name in names]
    if "real_build" in used:   # the real tree of the test's root's variant
        names.append(f"real-{item.callspec.params['rocm_root']}")   # type: ignore[attr-defined]
    return names


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A stable sort: pytest's own order (each parametrized root's tests together) holds within each part.
    items.sort(key=lambda item: bool(set(getattr(item, "fixturenames", ())) & set(DEFERRED)))


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or not session.items:
        return
    wanted = list(dict.fromkeys(name for item in session.items for name in builds(item)))
    if not wanted or builds(session.items[0]):
        return
    fd, log = tempfile.mkstemp(prefix="prebuild-", suffix=".log")
    with os.fdopen(fd, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tests.support.prebuild", *wanted], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=lambda: os.nice(19))
    RUNNING.append(Background(proc, wanted, Path(log)))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    for proc, names, log in RUNNING:
        if proc.poll() is None:   # its tests were deselected on the way, or failed before their fixture asked
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            state = "stopped: no test waited for it"
        else:
            state = f"exit {proc.returncode}"
        terminalreporter.write_sep("=", f"background builds ({', '.join(names)}): {state}; their output: {log}")
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("prebuild: "):
                terminalreporter.write_line(line)


def _run(name: str) -> str:
    from tests.support import hip_ep_support, real_umbrella_support
    from toolkit.buildroot.make import root_path
    from toolkit.recipe import packageset

    if name == "hip-ep":
        root_name, argv = hip_ep_support.ROOT_NAME, hip_ep_support.WHEEL_BUILD
    else:
        root_name, build = real_umbrella_support.ROOTS[name.removeprefix("real-")]
        argv = real_umbrella_support.wheel_build(build)
    root = root_path(packageset.load(root_name))
    if not (root / "usr").is_dir():
        return f"root {root_name} is not made: left to the fixture"
    python = real_umbrella_support.toolkit_python(root, root_name)
    proc = hip_ep_support.toolkit(root, python, argv)
    sys.stdout.write(proc.stdout + proc.stderr)
    return f"exit {proc.returncode}"


def main(names: list[str]) -> None:
    for name in names:
        started = time.monotonic()
        outcome = _run(name)
        print(f"prebuild: {name}: {outcome} in {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
