"""AMD's real umbrella built with its recipe's release default, the zig toolchain for glibc 2.28, inside the
Debian sid root (glibc 2.42): the SAME build tests/real_umbrella/test_build.py makes (its session fixture; one cold
build per CI run). The wheel's manylinux tag is auditwheel's and at most manylinux_2_28, every library's
needed GLIBC versions (read from its ELF version needs) are at or below the floor, no C++ runtime is needed,
and the installed package follows ORT's plugin EP wheel conventions and says which ROCm it links.
Registration with the root's ORT 1.27.1 (zero devices, no error) is tests/real_umbrella/test_build.py's
test_wheel_registers_in_fresh_venv_and_loads_backends_from_inside_it, on this same wheel."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from tests.support.real_umbrella_support import NAMED, PROJECT, inside, toolkit
from toolkit.binary.elf import highest_version, read_elf, version_needs
from toolkit.cmake.toolchain import resolve
from toolkit.recipe.load import load_recipe
from toolkit.util.cachedir import default_cache_dir

pytestmark = pytest.mark.buildroot
# The root and the real build are this folder's session fixtures (conftest.py): one build for every test here.
FLOOR = (2, 28)
RECIPE = load_recipe(PROJECT / "recipes" / "umbrella-ep-real.toml").build
ZIG = resolve(RECIPE.toolchain, RECIPE.glibc_floor, RECIPE.hide_section_bounds).identity()


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@pytest.fixture(scope="module")
def wheel(real_build):
    wheels = sorted((real_build.ws / "wheelhouse").glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_zig_built_it_and_the_identity_is_recorded(real_build):
    info = json.loads((real_build.ws / "build-info.json").read_text())
    assert info["toolchain"] == ZIG and ZIG["version"] == "0.17.1" and ZIG["target"] == "x86_64-linux-gnu.2.28"
    assert re.search(r"/zig-0\.17\.1-x86_64-linux-gnu\.2\.28-[0-9a-f]{8}/zig-clang\+\+$",
                     info["defines"]["CMAKE_CXX_COMPILER"])
    # The library architecture (without it CMake finds no onnxruntime, migraphx or hip config under
    # /usr/lib/x86_64-linux-gnu/cmake) and the C compiler come from the toolchain file the configure was given.
    toolchain_file = Path(info["defines"]["CMAKE_TOOLCHAIN_FILE"])
    assert 'set(CMAKE_LIBRARY_ARCHITECTURE "x86_64-linux-gnu")' in toolchain_file.read_text()
    cache = (real_build.ws / "cmake" / "CMakeCache.txt").read_text()
    assert f"CMAKE_TOOLCHAIN_FILE:FILEPATH={toolchain_file}" in cache or \
        f"CMAKE_TOOLCHAIN_FILE:UNINITIALIZED={toolchain_file}" in cache


def test_auditwheel_in_the_root_tags_it_manylinux_2_28_or_lower(sid, real_build, wheel):
    """The filename's tags, and auditwheel run again now inside the root (glibc 2.42) on the unrepaired wheel:
    the tag is computed from the libraries' symbol versions, never relabelled."""
    tags = re.findall(r"manylinux_(\d+)_(\d+)_x86_64", wheel.name)
    assert tags and all((int(a), int(b)) <= FLOOR for a, b in tags), wheel.name
    raw = sorted((real_build.ws / "wheel-raw").glob("*.whl"))[0]
    out = sid.build / "toolchain-repair"
    inside(sid, ["rm", "-rf", str(out)], network=False)
    proc = toolkit(sid, "repair", str(raw), "--recipe", "umbrella-ep-real", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = re.search(r"tag (manylinux_2_(\d+)_x86_64) \(computed by auditwheel", proc.stdout + proc.stderr)
    assert said and int(said.group(2)) <= FLOOR[1], proc.stdout + proc.stderr
    assert [p.name for p in out.glob("*.whl")] == [wheel.name]


def test_every_library_needs_glibc_at_most_the_floor_and_no_cxx_runtime(wheel):
    with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as scratch:
        libraries = [Path(archive.extract(n, scratch)) for n in archive.namelist() if n.endswith(".so")]
        assert {p.name for p in libraries} == {"libamdgpu-ep.so", "libmigraphx-backend.so", "libhip-backend.so"}
        for library in libraries:
            needs = version_needs(library)
            glibc = highest_version(needs, "GLIBC")
            assert glibc is not None and version(glibc) <= FLOOR, (library.name, needs)
            assert highest_version(needs, "GLIBCXX") is None, (library.name, needs)
            assert not [n for n in read_elf(library).needed if "c++" in n], library.name


def test_shipped_libraries_carry_no_debug_info_and_no_path_of_the_build_machine(wheel):
    """zig's static libc++ comes with debug info a Release build never asked for (98 MB a library, the toolkit
    cache's and the work tree's paths in it): the wrappers strip it, so what ships is as big as the code."""
    from elftools.elf.elffile import ELFFile

    paths = [str(p).encode() for p in (PROJECT, default_cache_dir())]
    with zipfile.ZipFile(wheel) as archive:
        for name in (n for n in archive.namelist() if n.endswith(".so")):
            data = archive.read(name)
            sections = [s.name for s in ELFFile(io.BytesIO(data)).iter_sections()]
            print(f"{name}: {len(data) / 2**20:.1f} MiB")
            assert not [s for s in sections if s.startswith(".debug")], (name, sections)
            assert not [p for p in paths if p in data], (name, [p for p in paths if p in data])


def test_shipped_runpaths_have_no_empty_entries(real_build):
    """The build tree's empty RUNPATH entries (`:::::::` after any real ones) are CMake's padding, room to write
    the install RPATH in place (GCC builds get the same); what is installed and shipped carries real entries only."""
    for library in (real_build.ws / "cmake").rglob("*.so"):
        if library.is_file() and not library.is_symlink():
            entries = read_elf(library).runpath
            if "" in entries:  # padding: trailing, never between real folders
                first = entries.index("")
                assert set(entries[first:]) == {""}, (library, entries)
    for folder in ("install/bin", "lib"):
        for library in (real_build.ws / folder).glob("*.so"):
            facts = read_elf(library)
            assert "" not in facts.runpath + facts.rpath, (library, facts.runpath)


def test_inspect_prints_the_glibc_maxima_and_the_toolchain(wheel):
    proc = subprocess.run([sys.executable, "-m", "toolkit", "inspect", str(wheel)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    maxima = re.findall(r"highest symbol versions: GLIBC (\S+), GLIBCXX (\S+)", proc.stdout)
    assert len(maxima) == 3 and all(version(g) <= FLOOR and cxx == "none" for g, cxx in maxima), proc.stdout
    assert "toolchain: zig 0.17.1 for x86_64-linux-gnu.2.28 (libc++ (static);" in proc.stdout


def test_package_follows_plugin_ep_conventions_and_names_its_rocm(sid, wheel):
    venv = sid.build / "toolchain-venv"
    inside(sid, ["rm", "-rf", str(venv)], network=False)
    inside(sid, ["python3", "-m", "venv", "--system-site-packages", str(venv)], network=False)
    inside(sid, [str(venv / "bin/pip"), "install", "-q", "--no-deps", "--no-index", str(wheel)], network=False)
    script = ("import json, onnxruntime_ep_amdgpu as p; print(json.dumps({'version': p.__version__, "
              "'path': p.get_library_path(), 'name': p.get_ep_name(), 'names': p.get_ep_names(), "
              "'rocm': p.get_rocm_libraries(), 'needs': p.get_runtime_needs(), "
              "'toolchain': p.get_build_info()['toolchain']}))")
    proc = inside(sid, [str(venv / "bin/python"), "-c", script], network=False, capture=True)
    seen = json.loads(proc.stdout)
    assert seen["version"] == wheel.name.split("-")[1]
    assert seen["path"].endswith("/onnxruntime_ep_amdgpu/libamdgpu-ep.so")
    assert seen["name"] == "AMDGPUExecutionProvider" and seen["names"] == ["AMDGPUExecutionProvider"]
    assert {sid.hip, "libmigraphx_c.so.3"} <= set(seen["rocm"])
    assert "libhipgpu.so" in seen["needs"]["libhip-backend.so"]
    assert seen["toolchain"]["target"] == "x86_64-linux-gnu.2.28"
    metadata = zipfile.ZipFile(wheel).read(f"{wheel.name.split('-')[0]}-{seen['version']}.dist-info/METADATA")
    description = metadata.decode()
    assert sid.hip in description and "libmigraphx_c.so.3" in description
    assert "libhipgpu.so" in description and "glibc 2.28 symbols at most" in description
    # The HIP soname picks the ROCm variant ([wheel.rocm_variants]); the description says which name installs which
    # (the meta-package is the newest ROCm's), and that no ONNX Runtime comes with it.
    assert wheel.name.startswith(f"onnxruntime_ep_amdgpu_{sid.variant}{NAMED.replace('-', '_')}-"), wheel.name
    assert f"Name: onnxruntime-ep-amdgpu-{sid.variant}" in description
    # No ONNX Runtime comes with it; the rocm7 --with-hipdnn build offers hip-ep's wheel as its [hip] extra only.
    requires = [line for line in description.splitlines() if line.startswith("Requires-Dist:")]
    hip = sid.variant == "rocm7" and bool(NAMED)
    assert len(requires) == (1 if hip else 0), requires
    assert all("onnxruntime-ep-hip" in line and 'extra == "hip"' in line for line in requires), requires
    # A --with-hipdnn build is its own distribution per ROCm major, which no meta-package names.
    assert f"- ROCm with `libamdhip64.so.6`: `pip install onnxruntime-ep-amdgpu-rocm6{NAMED}`" in description
    assert f"- ROCm with `libamdhip64.so.7`: `pip install onnxruntime-ep-amdgpu-rocm7{NAMED}`" in description
