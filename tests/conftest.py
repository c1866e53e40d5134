"""Shared fixtures and the markers' rules.

Fixtures: `sample_libs` builds the bundled sample tree, patched, once per session and variant;
`sid_root` is the Debian sid ROCm build root (made once, cached); `release_libs` are the gcc-built
libraries the release tests pack into wheels; `wheelhouse` holds PyPI's wheels, downloaded once per session, for
fresh venvs beside the ONNX Runtime flavours users have.

Markers (registered in pyproject.toml): the markers a fixture implies (FIXTURE_MARKERS) are put on every
test that uses it, whatever route it takes to it (directly or through another fixture), so `buildroot` is
on every test that uses `sid_root` and `-m "not buildroot"` leaves none behind; `gpu` tests need a GPU
device and skip, saying so, without one. Under CI=true nothing may skip: a skip, from wherever it comes, is
reported as a failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support import buildroot_support
from tests.support.flavours import Wheelhouse
from tests.support.http import FaultServer
from tests.support.release_wheels import build_release_libs
from tests.support.sample_tree import build_sample
from tests.support.tools import has_gpu, require_tool

CI = os.environ.get("CI") == "true"

# The time each test module took, printed at the end of every run (CI's log shows where the time went).
# The slowest builds start in the background at once, and their tests run last (tests/support/prebuild.py).
pytest_plugins = ("tests.support.module_times", "tests.support.prebuild")


# Fixture -> the markers every test using it gets. tiny_root (tests/buildroot/test_tiny_root.py) makes
# a small root of its own with debootstrap from deb.debian.org.
FIXTURE_MARKERS = {"sid_root": ("buildroot",), "rocm7_root": ("buildroot",), "rocm_root": ("buildroot",),
                   "windows_root": ("buildroot", "network"), "tiny_root": ("buildroot", "network"),
                   "wheelhouse": ("network",)}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, markers in FIXTURE_MARKERS.items():
            for name in markers if fixture in used else ():
                if item.get_closest_marker(name) is None:
                    item.add_marker(name)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None:
        require_tool(has_gpu(), "no GPU device here (/dev/kfd or /dev/dri/renderD*): the test needs one")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where tests must not skip: {reason}"


@pytest.fixture(scope="session")
def sample_libs(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """`sample_libs(hipdnn=False)`: the lib folder of a patched sample build, built once per session."""
    built: dict[bool, Path] = {}

    def get(hipdnn: bool = False) -> Path:
        if hipdnn not in built:
            built[hipdnn] = build_sample(tmp_path_factory.mktemp("hipdnn" if hipdnn else "default"), hipdnn)
        return built[hipdnn]

    return get


@pytest.fixture(scope="session")
def sid_root() -> Path:
    """The `debian-sid-rocm` build root: hipcc (clang 21), MIGraphX, ORT 1.27 headers; run commands in it
    with toolkit.buildroot.run_in_root. Tests using it are marked `buildroot`."""
    return buildroot_support.sid_root()


@pytest.fixture(scope="session")
def rocm7_root() -> Path:
    """The `debian-sid-rocm7` build root: the sid root plus HIP 7.2.4 and hipcc 7.2.4 (clang 22) from experimental,
    MIGraphX 7.1.1 kept; marked `buildroot`."""
    return buildroot_support.build_root("debian-sid-rocm7")


@pytest.fixture(scope="session")
def windows_root() -> Path:
    """The `debian-sid-windows` build root: MinGW-w64's GCC for UCRT, Wine, Xvfb and lavapipe; marked `buildroot`, and
    `network` (the Windows smoke fetches ONNX Runtime's Windows wheels from PyPI)."""
    return buildroot_support.build_root("debian-sid-windows")


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Wheelhouse:
    """PyPI's wheels (ONNX Runtime's flavours, onnxruntime-genai), each downloaded once per session into one folder,
    and fresh venvs filled from that folder alone (tests/support/flavours.py); marked `network`."""
    return Wheelhouse(tmp_path_factory.mktemp("pypi-wheels"))


@pytest.fixture
def server() -> Iterator[FaultServer]:
    """A real HTTP server on 127.0.0.1 for one test, its routes set by the test (tests/support/http.py)."""
    s = FaultServer()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def release_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake ROCm runtime, a library a wheel bundles, and an extension linking both plus libm (gcc-built)."""
    return build_release_libs(tmp_path_factory.mktemp("release-libs"))
