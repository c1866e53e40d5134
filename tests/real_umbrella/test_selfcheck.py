"""AMD's real umbrella wheel in a user's hands: its self-check (`python -m onnxruntime_ep_amdgpu`) and build facts,
for each ROCm variant's root (conftest.py's `sid`: rocm6 links libamdhip64.so.6, rocm7 libamdhip64.so.7).

Outside the root (this machine: no ROCm) the wheel sits in fresh venvs beside PyPI's onnxruntime at the floor
and the newest of its range: the self-check exits 1 naming the HIP library, the error ORT gives when asked
is the loader's line about that library, and the smoke passes on that agreement. Inside the root (ROCm, no GPU)
every ROCm library is found and loads, the backends load, ORT (Debian's 1.27, and PyPI's floor and newest)
registers the EP with zero devices, and the self-check exits 1 with "no AMD GPU". Uses the session's ONE real
build (conftest.py's real_build).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.flavours import Wheelhouse, installed
from tests.support.real_umbrella_support import BUILD, NAMED, binds, inside, toolkit
from tests.support.selfcheck_support import (
    PACKAGE,
    guide_snippets,
    hip_not_found,
    ort_range_ends,
    run_python,
    run_selfcheck,
    verdict,
    write_model,
)
from toolkit.buildroot import run_in_root
from toolkit.recipe.load import PROJECT_ROOT
from toolkit.recipe.smoke import SmokeSettings
from toolkit.smoke.run import run_smoke
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml
from toolkit.wheel.inspection import format_report, inspect_wheel

COMMIT = "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22"
# The HIP headers each root compiles with: Debian sid's HIP 6.4.3 (6.4.43484), experimental's 7.2.4.
HIP_HEADERS = {"rocm6": "6.4.", "rocm7": "7.2."}
MIGRAPHX = "onnxruntime-migraphx==1.27.1"
PROVIDERS = "import onnxruntime as ort; print(ort.get_available_providers())"
REGISTER = ("import onnxruntime as ort, onnxruntime_ep_amdgpu as ep\n"
            "ort.register_execution_provider_library(ep.get_ep_name(), ep.get_library_path())\n")


def not_found(sid) -> str:
    """The self-check's verdict for this variant's wheel where no ROCm is: its HIP soname, what provides it, and how
    to take the other variant instead."""
    return hip_not_found(sid.variant.removeprefix("rocm"), named=NAMED)


def _wheel(real_build):
    wheels = sorted((real_build.ws / "wheelhouse").glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_inspect_names_the_upstream_commit_hip_and_the_variant(sid, real_build):
    text = format_report(inspect_wheel(_wheel(real_build)))
    print(text)
    hip = HIP_HEADERS[sid.variant]
    assert f"  upstream commit: {COMMIT}\n" in text
    assert f"  ROCm version: HIP {hip}" in text and "/usr/include/hip/hip_version.h" in text
    assert f"  for ROCm: {sid.variant} (links {sid.hip}; compiled against HIP {hip}" in text


@pytest.mark.network  # PyPI's onnxruntime at the floor and the newest of the range
def test_outside_the_root_beside_pypi_onnxruntime_it_names_the_hip_library(sid, real_build, wheelhouse, tmp_path):
    wheel, expected = _wheel(real_build), not_found(sid)
    for version in ort_range_ends(">=1.24", tmp_path / "probe"):
        wheelhouse.fetch(f"onnxruntime=={version}")
        python = wheelhouse.venv(tmp_path / f"venv-{version}", f"onnxruntime=={version}", wheel)
        done = run_selfcheck(python, cwd=tmp_path)
        print(done.stdout)
        assert done.returncode == 1 and verdict(done) == expected, done.stdout + done.stderr
        assert f"upstream commit {COMMIT}" in done.stdout
        assert f"built against: HIP {HIP_HEADERS[sid.variant]}" in done.stdout
        assert "libmigraphx_c.so.3 (needed by libmigraphx-backend.so): NOT FOUND" in done.stdout
        failed = run_python(python, REGISTER, cwd=tmp_path)
        assert failed.returncode == 1 and f"{sid.hip}: cannot open shared object file" in failed.stderr
        # The guide's register snippet stops with ORT's error and the self-check's explanation, no traceback.
        guided = run_python(python, guide_snippets("python")[1], cwd=tmp_path)
        assert guided.returncode == 1 and "Traceback" not in guided.stderr, guided.stderr
        assert "cannot register AMDGPUExecutionProvider" in guided.stderr and expected[11:] in guided.stderr


@pytest.mark.network  # the smoke venvs install onnxruntime, onnx and numpy from PyPI
def test_the_recipes_smoke_outside_the_root_passes_on_the_self_checks_word(sid, real_build, tmp_path, capfd):
    recipe = PROJECT_ROOT / "recipes" / "umbrella-ep-real.toml"
    settings = read(SmokeSettings, load_toml(recipe).table("smoke"))
    assert settings.onnxruntime_range
    assert run_smoke([_wheel(real_build)], settings, work_dir=tmp_path / "smoke") == 0
    out = "".join(capfd.readouterr())
    expected = not_found(sid)
    assert f"PASS registering AMDGPUExecutionProvider fails as the self-check says ({expected})" in out
    assert "SMOKE PASS" in out and "ONNXRUNTIME RANGE PASS: onnxruntime>=1.24" in out
    assert out.count(f"ORT cannot load the EP here, as the self-check says: {expected[11:]}") == 2


def _root_venv(sid, where, system_site: bool, wheels: list, find_links=None):
    shutil.rmtree(where, ignore_errors=True)
    inside(sid, ["python3", "-m", "venv", *(["--system-site-packages"] if system_site else []), str(where)],
           network=False)
    links = ["--find-links", str(find_links)] if find_links else []
    inside(sid, [str(where / "bin/pip"), "install", "-q", "--no-index", *links, *map(str, wheels)], network=False)
    return where / "bin" / "python"


def _root_selfcheck(sid, python, *args):
    return inside(sid, [str(python), "-I", "-m", PACKAGE, *args], network=False, check=False, capture=True)


def test_inside_the_root_every_rocm_library_is_found_and_no_amd_gpu_is_the_verdict(sid, real_build):
    wheel = _wheel(real_build)
    # Debian's onnxruntime 1.27 through --system-site-packages; the wheel itself, no index.
    python = _root_venv(sid, sid.build / "selfcheck-venv", True, ["--no-deps", wheel])
    done = _root_selfcheck(sid, python)
    print(done.stdout, done.stderr)
    assert done.returncode == 1 and verdict(done).startswith("not ready: no AMD GPU here ("), done.stdout
    for soname in (sid.hip, "libmigraphx_c.so.3"):
        line = next(x for x in done.stdout.splitlines() if x.strip().startswith(soname))
        assert ": found /" in line and line.endswith("; loads"), line
    for backend in ("libmigraphx-backend.so (backend): loads", "libhip-backend.so (backend): loads"):
        assert backend in done.stdout
    assert "ORT registration of AMDGPUExecutionProvider: registered, 0 device(s)" in done.stdout
    facts = json.loads(_root_selfcheck(sid, python, "--json").stdout)
    assert facts["build"]["upstream_commit"] == COMMIT
    assert facts["build"]["hip_version"].startswith(HIP_HEADERS[sid.variant])
    assert all(lib["found"] and lib["loads"] for lib in facts["rocm_libraries"])
    assert facts["registration"]["devices"] == [] and facts["registration"]["error"] is None
    # The guide's snippets as written: the check says why, the session takes the zero-devices branch (CPU).
    work = sid.build / "selfcheck-guide"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    write_model(work / "model.onnx")
    for i, snippet in enumerate(guide_snippets("python")[:2]):
        (work / f"snippet{i}.py").write_text(snippet)
    check = run_in_root(sid.root, [str(python), "-I", str(work / "snippet0.py")], binds=binds(), cwd=work,
                        network=False, capture=True)
    assert check.stdout.startswith("False no AMD GPU here ("), check.stdout
    run = run_in_root(sid.root, [str(python), "-I", str(work / "snippet1.py")], binds=binds(), cwd=work,
                      network=False, capture=True)
    assert run.stdout.splitlines() == ["[]", "AMDGPUExecutionProvider offers no device here; running on the CPU",
                                       "['CPUExecutionProvider']"], run.stdout + run.stderr


def _root_wheels(sid, *requirements: str) -> Path:
    """PyPI's wheels for the root's Python, downloaded here into one folder both roots share (they have the same
    Python), installed offline there."""
    version_of_root = inside(sid, ["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             network=False, capture=True).stdout.strip()
    return Wheelhouse(BUILD / "root-wheels").fetch(*requirements, python_version=version_of_root)


@pytest.mark.network  # PyPI's onnxruntime wheels and AMD's onnxruntime-migraphx for the root's Python
def test_inside_the_root_pypi_onnxruntime_floor_newest_and_amds_migraphx_register_the_real_ep(sid, real_build,
                                                                                              tmp_path):
    """Where this variant's HIP is, each ORT a user may have registers the real EP (zero devices without a GPU):
    PyPI's lowest and newest in range, and AMD's onnxruntime-migraphx, which keeps its MIGraphX EP beside ours."""
    floor, newest = ort_range_ends(">=1.24", tmp_path / "probe")
    for requirement in (f"onnxruntime=={floor}", f"onnxruntime=={newest}", MIGRAPHX):
        links = _root_wheels(sid, requirement)
        distribution, version = requirement.split("==")
        python = _root_venv(sid, sid.build / f"selfcheck-venv-{distribution}-{version}", False,
                            [_wheel(real_build), requirement], links)
        done = _root_selfcheck(sid, python)
        print(done.stdout, done.stderr)
        assert f"onnxruntime: {distribution} {version}; supported >=1.24: yes" in done.stdout
        assert "ORT registration of AMDGPUExecutionProvider: registered, 0 device(s)" in done.stdout
        assert done.returncode == 1 and verdict(done).startswith("not ready: no AMD GPU here ("), done.stdout
        # The hip backend's EP is no package's: counted as missing, with where it comes from, yet not what blocks.
        assert "  - libhipgpu.so not found (loaded by libhip-backend.so at run time) (optional): install the HIP " \
               "EP, built from AMD's ROCm/hip-ep sources" in done.stdout
    listed = inside(sid, [str(python), "-I", "-c", "import importlib.metadata as m; "
                          "print(sorted(d.metadata['Name'].lower() for d in m.distributions()))"],
                    network=False, capture=True)
    assert "'onnxruntime'" not in listed.stdout and "'onnxruntime-migraphx'" in listed.stdout, listed.stdout
    providers = inside(sid, [str(python), "-I", "-c", PROVIDERS], network=False, capture=True)
    assert providers.stdout.strip() == "['MIGraphXExecutionProvider', 'CPUExecutionProvider']", providers.stderr


@pytest.mark.network  # onnxruntime, onnx and numpy wheels for the root's Python, downloaded here
def test_the_recipes_smoke_inside_the_root_registers_with_zero_devices(sid, real_build, tmp_path):
    links = _root_wheels(sid, "onnxruntime", "onnx", "numpy")
    # The toolkit's smoke command inside the root, no network: the wheel, then PyPI's onnxruntime from `links`.
    proc = toolkit(sid, "smoke", str(_wheel(real_build)), "--recipe", "umbrella-ep-real", "--no-index",
                   "--find-links", str(links))
    out = proc.stdout + proc.stderr
    print(out)
    assert proc.returncode == 0, out[-6000:]
    assert "not ready: no AMD GPU here (" in out and "libmigraphx-backend.so (backend): loads" in out
    assert "PASS registered AMDGPUExecutionProvider from " in out
    assert "PASS self-check exit 1 agrees with ORT (0 device(s) offered)" in out and "SMOKE PASS" in out
    assert "hip backend unavailable" in out and "libhipgpu.so" in out   # the backend that cannot load says why
    assert "SKIP onnxruntime range: --no-index" in out



def test_beside_onnxruntime_migraphx_outside_the_root_it_fails_as_its_self_check_says(sid, real_build, wheelhouse,
                                                                                      tmp_path):
    """Where AMD's users are: AMD's ORT in a fresh venv, then the wheel. No onnxruntime appears, the MIGraphX EP stays;
    on this machine (no ROCm) registering fails with the loader's line about the HIP library the self-check names."""
    wheelhouse.fetch(MIGRAPHX)
    python = wheelhouse.venv(tmp_path / "venv", MIGRAPHX, _wheel(real_build))
    names = installed(python)
    assert "onnxruntime" not in names and names["onnxruntime-migraphx"] == "1.27.1", names
    assert names[f"onnxruntime-ep-amdgpu-{sid.variant}{NAMED}"].startswith("0.1.0")
    assert run_python(python, PROVIDERS).stdout.strip() == "['MIGraphXExecutionProvider', 'CPUExecutionProvider']"
    done = run_selfcheck(python, cwd=tmp_path)
    print(done.stdout)
    assert (done.returncode, verdict(done)) == (1, not_found(sid)), done.stdout + done.stderr
    assert "onnxruntime: onnxruntime-migraphx 1.27.1; supported >=1.24: yes" in done.stdout
    failed = run_python(python, REGISTER, cwd=tmp_path)
    assert failed.returncode == 1 and f"{sid.hip}: cannot open shared object file" in failed.stderr, failed.stderr
