"""No ROCm library is ever bundled, whatever its spelling or place; anything else the wheel needs is bundled
or the repair fails naming it. Real libraries built here with gcc (chosen sonames), real auditwheel repairs."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.tools import need
from tests.support.wheel_support import SETTINGS, build_c_library, repair_bundling, shared_library, stand_in_lib_dir
from toolkit.binary.elf import read_elf
from toolkit.release import sbom
from toolkit.util.errors import ToolkitError
from toolkit.wheel.build import build_wheel

INFO = {"source_revision": "0123abc", "patches": [], "features": [], "rocm_version": None, "gpu_targets": []}

# The ROCm 7 and MIGraphX libraries, spelled as their real sonames, plus unversioned ones
# (a library linked without a version in its soname, as libamdhip64.so was).
ROCM_SONAMES = [
    "libamdhip64.so", "librocsparse.so.1", "librocm-core.so.1", "librocsolver.so.0", "librocfft.so.0",
    "librocrand.so.1", "libhipsolver.so.0", "libhipsparselt.so.0", "libhiprtc.so.7", "libhiprtc-builtins.so.7",
    "librocprofiler-register.so.0", "libamd_comgr.so.3", "libhsa-runtime64.so.1", "libMIOpen.so.1",
    "libmigraphx_c.so.3", "libmigraphx.so.2014000", "libmigraphx_gpu.so", "libhipblaslt.so.1", "librccl.so.1",
    "libroctx64.so.4", "libroctracer64.so.4", "librocm_smi64.so.1", "libhipfft.so.0", "libhiprand.so.1",
    "libhipsparse.so.1", "libhipblas.so.3", "librocblas.so.5", "libhipdnn_backend.so", "libdrm_amdgpu.so.1",
    "libdrm.so.2", "libnuma.so.1", "libhsakmt.so.1", "librocprofiler-sdk.so.1", "libamd_smi.so.25",
]


def wheel_linking(tmp_path: Path, folder: Path, umbrella: list[str], backend: list[str] = (),
                  umbrella_flags: list[str] = ()) -> Path:
    libs = stand_in_lib_dir(tmp_path / "lib", umbrella_flags=[f"-L{folder}", *umbrella_flags],
                            umbrella_libs=[f"-l:{n}" for n in umbrella])
    if backend:
        build_c_library(libs / "libmigraphx-backend.so", [f"-L{folder}"], [f"-l:{n}" for n in backend])
    return build_wheel(SETTINGS, libs, INFO, tmp_path / "out")


def names_in(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return [n.rsplit("/", 1)[-1] for n in archive.namelist()]


def stem(soname: str) -> str:
    return soname.split(".so")[0]


def test_every_rocm_soname_stays_external_and_the_rest_is_bundled(tmp_path, monkeypatch):
    folder = tmp_path / "somewhere"  # not a ROCm install: only the names say these are ROCm
    for soname in ROCM_SONAMES:
        shared_library(folder, soname)
    # A non-ROCm library is bundled, but not the ROCm library it needs.
    shared_library(folder, "libplainhelper.so.2", ["librocsolver.so.0"])
    monkeypatch.setenv("LD_LIBRARY_PATH", str(folder))
    wheel = wheel_linking(tmp_path, folder, ["libplainhelper.so.2", *ROCM_SONAMES[:17]], ROCM_SONAMES[17:])

    result = repair_bundling(wheel, tmp_path / "repaired")
    inside = names_in(result.wheel)
    assert [n for n in inside if n.startswith("libplainhelper-")], inside
    grafted = [g.rsplit("/", 1)[-1] for g in result.grafted]
    assert [n for n in inside if n in ROCM_SONAMES] == []
    assert [g for g in grafted for s in ROCM_SONAMES if g.startswith(stem(s) + "-")] == []
    assert result.excluded == tuple(sorted(ROCM_SONAMES))
    reasons = {n.soname: n.reason for n in result.needs}
    assert reasons["libamdhip64.so"] == "ROCm by name (libamdhip64.so)"
    assert reasons["librocm-core.so.1"] == "ROCm by name (librocm-core.so.*)"
    assert reasons["libplainhelper.so.2"] == f"found at {folder / 'libplainhelper.so.2'}"


def test_a_library_inside_a_rocm_install_stays_external_whatever_its_name(tmp_path, monkeypatch):
    install = tmp_path / "rocm-7.0.2"
    (tmp_path / "rocm").symlink_to(install.name)  # ROCM_PATH is often a symlink to the versioned folder
    # Its own needs are ROCm's business: one that is missing here does not fail the repair.
    shared_library(install / "lib", "libdeepdep.so.1")
    shared_library(install / "lib", "libvendorblob.so.4", ["libdeepdep.so.1"])
    (install / "lib" / "libdeepdep.so.1").unlink()
    # Found through the versioned folder, named through the symlink: both spellings are the install.
    monkeypatch.setenv("LD_LIBRARY_PATH", str(install / "lib"))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    result = repair_bundling(wheel_linking(tmp_path, install / "lib", ["libvendorblob.so.4"]), tmp_path / "repaired")
    assert not [n for n in names_in(result.wheel) if n.startswith("libvendorblob")]
    assert result.excluded == ("libvendorblob.so.4",)
    reason = next(n.reason for n in result.needs if n.soname == "libvendorblob.so.4")
    assert reason.startswith("resolves inside a ROCm install") and str(install) in reason
    # The SBOM, made on the same machine, names it as a ROCm component and says by which rule.
    external = {c["name"]: c for c in sbom.wheel_sbom(result.wheel)["components"] if c.get("isExternal")}
    props = {p["name"]: p["value"] for p in external["libvendorblob.so.4"]["properties"]}
    assert props["toolkit:provided-by"] == "rocm" and props["toolkit:rocm-rule"] == reason

    # The same library outside any ROCm install is bundled, with what it needs: the place decided.
    monkeypatch.delenv("ROCM_PATH")
    with pytest.raises(ToolkitError, match=r"libdeepdep\.so\.1, needed by libvendorblob\.so\.4"):
        repair_bundling(wheel_linking(tmp_path / "a", install / "lib", ["libvendorblob.so.4"]), tmp_path / "r1")
    shared_library(install / "lib", "libdeepdep.so.1")
    control = repair_bundling(wheel_linking(tmp_path / "b", install / "lib", ["libvendorblob.so.4"]), tmp_path / "r2")
    assert [n for n in names_in(control.wheel) if n.startswith(("libvendorblob-", "libdeepdep-"))] != []
    assert control.excluded == ()
    # /opt/rocm and its versioned spellings are ROCm installs without being named anywhere.
    from toolkit.wheel.rocm import Resolver

    resolver = Resolver()
    assert resolver.rocm_directory("/opt/rocm-7.2.0/lib") and resolver.rocm_directory("/opt/rocm/lib/llvm/lib")
    assert resolver.rocm_directory("/opt/rocmish/lib") is None


def install_deb(root: Path, work: Path, package: str, maintainer: str, files: dict[str, Path]) -> None:
    """Build a real .deb holding `files` (path in the package -> file) and install it with dpkg into `root`."""
    need("dpkg-deb", "dpkg")
    tree = work / package
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: 1.0\nArchitecture: all\nMaintainer: {maintainer}\nDescription: test\n")
    for inside, file in files.items():
        (tree / inside.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (tree / inside.lstrip("/")).write_bytes(file.read_bytes())
    deb = work / f"{package}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(tree), str(deb)], check=True, capture_output=True)
    for folder in ("info", "updates", "triggers"):
        (root / "var/lib/dpkg" / folder).mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").touch()
    done = subprocess.run(["dpkg", f"--root={root}", "--force-not-root", "--force-script-chrootless", "-i", str(deb)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_library_a_rocm_package_owns_stays_external_and_its_folder_may_be_a_runpath(tmp_path, monkeypatch):
    # Debian keeps MIGraphX's libraries in private folders (/usr/lib/<triplet>/migraphx/lib): dpkg says whose.
    built = tmp_path / "built"
    rocm_file = shared_library(built, "libzzblob.so.2")
    other_file = shared_library(built, "libyyblob.so.1")
    root = tmp_path / "root"
    private = "/usr/lib/x86_64-linux-gnu/migraphx/lib"
    install_deb(root, tmp_path / "debs", "libzzblob2", "Debian ROCm Team <debian-ai@lists.debian.org>",
                {f"{private}/libzzblob.so.2": rocm_file})
    install_deb(root, tmp_path / "debs", "libyyblob1", "Somebody Else <else@example.org>",
                {"/usr/lib/x86_64-linux-gnu/other/libyyblob.so.1": other_file})
    monkeypatch.setenv("DPKG_ROOT", str(root))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(root / "usr/lib/x86_64-linux-gnu/other"))
    wheel = wheel_linking(tmp_path, built, ["libzzblob.so.2"], ["libyyblob.so.1"],
                          umbrella_flags=[f"-Wl,-rpath,{root}{private}", "-Wl,--enable-new-dtags"])
    result = repair_bundling(wheel, tmp_path / "repaired")
    inside = names_in(result.wheel)
    assert not [n for n in inside if n.startswith("libzzblob")]
    assert [n for n in inside if n.startswith("libyyblob-")], inside
    assert result.excluded == ("libzzblob.so.2",)
    reason = next(n.reason for n in result.needs if n.soname == "libzzblob.so.2")
    assert "owned by ROCm package libzzblob2 (Debian ROCm Team <debian-ai@lists.debian.org>)" in reason
    with zipfile.ZipFile(result.wheel) as archive:
        archive.extract("onnxruntime_ep_amdgpu/libamdgpu-ep.so", tmp_path / "x")
    assert read_elf(tmp_path / "x/onnxruntime_ep_amdgpu/libamdgpu-ep.so").runpath == (f"{root}{private}",)


def test_a_library_neither_rocm_nor_system_that_cannot_be_found_fails_the_repair_by_name(tmp_path, monkeypatch):
    folder = tmp_path / "gone"
    shared_library(folder, "libghost.so.3")
    shared_library(folder, "libamdhip64.so.6")
    wheel = wheel_linking(tmp_path, folder, ["libghost.so.3", "libamdhip64.so.6"])
    for file in folder.glob("lib*"):
        file.unlink()  # a missing ROCm library is the ROCm install's business; a missing other one is ours
    with pytest.raises(ToolkitError) as err:
        repair_bundling(wheel, tmp_path / "repaired")
    message = str(err.value)
    assert "libghost.so.3, needed by onnxruntime_ep_amdgpu/libamdgpu-ep.so" in message
    assert "amdhip64" not in message.split("hint:")[0]
    assert not list((tmp_path / "repaired").glob("*.whl"))
    done = subprocess.run([sys.executable, "-m", "toolkit", "repair", str(wheel), "--out", str(tmp_path / "r")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: cannot repair") and "libghost.so.3" in done.stderr
