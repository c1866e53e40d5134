"""The build root's OCI image: made by one command, tagged by the package set, reused, listed by `root show`,
and holding the toolkit's venv (the root's python3 with the toolkit's dependencies)."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.release_image import make_image, toolkit_cli
from tests.support.tools import ROOT
from toolkit.buildroot import image, make, session
from toolkit.recipe import packageset


@pytest.fixture(scope="module")
def made(sid_root) -> str:
    return make_image()[0]


def test_tag_names_the_package_set_and_the_second_call_reuses_it(made):
    spec = packageset.load("debian-sid-rocm")
    assert made.startswith(f"{image.REPOSITORY}debian-sid-rocm:{spec.digest()[:16]}-")
    again = toolkit_cli("root", "image", "debian-sid-rocm")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().splitlines()[-1] == made
    assert "exists, reused" in again.stderr


def test_root_show_lists_the_image(made):
    shown = toolkit_cli("root", "show", "debian-sid-rocm")
    assert shown.returncode == 0, shown.stderr
    assert f"image:       {made} " in shown.stdout and "(current)" in shown.stdout


def test_image_runs_the_toolkit_with_its_venv(made):
    argv = ["podman", "run", "--rm", "--network", "none", made, "python3", "-c",
            "import sys, elftools, cyclonedx, auditwheel, ziglang; print(sys.prefix)"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=image.engine_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "/roots/venvs/" in proc.stdout
    hipcc = subprocess.run(["podman", "run", "--rm", "--network", "none", made, "hipcc", "--version"],
                           capture_output=True, text=True, env=image.engine_env(), timeout=300)
    assert hipcc.returncode == 0 and "HIP version" in hipcc.stdout, hipcc.stdout + hipcc.stderr


def test_the_venv_records_its_root_for_prune(made):
    described = image.describe("debian-sid-rocm", ROOT)
    assert described is not None and described.tag == made
    assert session.venv_root(described.venv) == str(make.ensure_root("debian-sid-rocm"))
