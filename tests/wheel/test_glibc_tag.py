"""Where auditwheel has no policy (libraries that need a glibc newer than its newest), repair computes the PEP 600 tag
itself: `manylinux_X_Y` for the highest GLIBC_X.Y the wheel's ELF files need (its own and the copies it bundles),
provided what it leaves to the system is on the library list of auditwheel's newest policy; below that, auditwheel
computes it as before. Real wheels of libraries whose symbol version needs are made with a version script against
a stand-in libc.so.6 (GLIBC_2.43 as sid's libm functions give hip-ep; 2.42; 2.41 and 2.17, within auditwheel's
policies); pip on this machine, in a fresh venv, refuses the manylinux_2_43 wheel (glibc 2.36 here) and takes it for
a platform that has 2.43."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.wheel_support import auditwheel_sym_tag, build_c_library, needs_glibc, repair_bundling
from toolkit.binary.elf import highest_versions, version_needs
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.util.errors import ToolkitError
from toolkit.wheel.build import build_wheel
from toolkit.wheel.glibc_tag import computed_tag, newest_policy
from toolkit.wheel.repair import repair_wheel
from toolkit.wheel.rocm import Need
from toolkit.wheel.wheelfile import read_headers

SETTINGS = WheelSettings(version="0.4.0", components=(Component("probe-ep", "ProbeEP"),),
                         distribution="onnxruntime-ep-probe", import_package="onnxruntime_ep_probe")
INFO = {"source_revision": "x", "features": []}


def wheel_needing(work: Path, version: str) -> Path:
    needs_glibc(work / "lib" / "libprobe-ep.so", version)
    assert highest_versions(version_needs(work / "lib" / "libprobe-ep.so")) == {"GLIBC": version}
    return build_wheel(SETTINGS, work / "lib", INFO, work / "dist")


def wheel_tags(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        headers = read_headers(archive, "WHEEL")
    assert headers is not None
    return headers.get_all("Tag") or []


def beyond(version: str) -> bool:
    return tuple(map(int, version.split("."))) > newest_policy().glibc


@pytest.mark.parametrize("version", ["2.43", "2.42", "2.41", "2.17"])
def test_the_tag_is_the_highest_glibc_needed_computed_by_the_toolkit_past_auditwheels_policies(version, tmp_path,
                                                                                               capfd):
    result = repair_wheel(wheel_needing(tmp_path, version), tmp_path / "repaired", components=SETTINGS.components)
    x, y = version.split(".")
    assert result.tag == f"manylinux_{x}_{y}_x86_64"
    assert result.wheel.name.startswith("onnxruntime_ep_probe-0.4.0-py3-none-") and \
        f"manylinux_{x}_{y}_x86_64" in result.wheel.name.removesuffix(".whl").rsplit("-", 1)[1].split(".")
    # The WHEEL file says the tags its name says.
    assert wheel_tags(result.wheel) == [f"py3-none-{t}" for t in result.platform_tags]
    said = capfd.readouterr().err
    if beyond(version):
        assert f"tag manylinux_{x}_{y}_x86_64 (computed by the toolkit: auditwheel's policies end at " \
               f"{newest_policy().name}, and what the wheel leaves to the system is on that policy's library " \
               f"list, GLIBC_{version} at most" in said, said
        # auditwheel's own view of the same wheel: no policy of its own takes it.
        assert auditwheel_sym_tag(result.wheel) == "linux_x86_64"
    else:
        assert "(computed by auditwheel from the glibc symbol versions its libraries need" in said, said
        assert auditwheel_sym_tag(result.wheel) == result.tag


def test_a_bundled_copy_that_needs_a_newer_glibc_sets_the_tag(tmp_path, monkeypatch):
    """The wheel's own library needs this machine's glibc at most; the library it links and repair bundles needs
    GLIBC_2.43: the tag is the copy's."""
    folder = tmp_path / "elsewhere"
    needs_glibc(folder / "libnewer.so.1", "2.43", flags=["-Wl,-soname,libnewer.so.1"])
    monkeypatch.setenv("LD_LIBRARY_PATH", str(folder))
    build_c_library(tmp_path / "lib" / "libprobe-ep.so", [f"-L{folder}"], ["-l:libnewer.so.1"])
    wheel = build_wheel(SETTINGS, tmp_path / "lib", INFO, tmp_path / "dist")
    result = repair_bundling(wheel, tmp_path / "repaired", components=SETTINGS.components)
    assert result.tag == "manylinux_2_43_x86_64"
    assert [g.split("/")[0] for g in result.grafted] == ["onnxruntime_ep_probe.libs"]
    assert result.grafted[0].split("/")[1].startswith("libnewer-")


def test_the_newest_policy_is_auditwheels_own():
    """Read from the policy file of the auditwheel installed: the same policy and library list auditwheel's own API
    gives as its last (lowest priority) manylinux policy."""
    from auditwheel.policy import Architecture, Libc, WheelPolicies

    theirs = WheelPolicies(libc=Libc.GLIBC, arch=Architecture.x86_64).lowest
    ours = newest_policy()
    assert theirs.name == f"{ours.name}_x86_64" and theirs.whitelist == ours.libraries
    assert "libc.so.6" in ours.libraries and "libstdc++.so.6" in ours.libraries


def need(soname: str, kind: str, reason: str) -> Need:
    return Need(soname, kind, reason, f"/usr/lib/x86_64-linux-gnu/{soname}", ("onnxruntime_ep_probe/libprobe-ep.so",))


def test_a_system_library_off_the_policys_list_gives_no_manylinux_tag():
    ok = [need("libc.so.6", "system", "auditwheel's manylinux whitelist"),
          need("ld-linux-x86-64.so.2", "system", "the dynamic loader"),
          need("libamdhip64.so.7", "rocm", "ROCm by name (libamdhip64.so.*)")]
    assert computed_tag({"GLIBC": "2.43"}, ok, "x86_64") == "manylinux_2_43_x86_64"
    outside = [*ok, need("libnuma.so.1", "system", "system library (libnuma.so.*)")]
    with pytest.raises(ToolkitError) as caught:
        computed_tag({"GLIBC": "2.43"}, outside, "x86_64")
    assert str(caught.value).startswith(
        f"no manylinux tag: the wheel needs GLIBC_2.43, newer than auditwheel's newest policy {newest_policy().name}, "
        "and leaves to the system libraries that policy does not list: libnuma.so.1 (needed by "
        "onnxruntime_ep_probe/libprobe-ep.so)")


def glibc_here() -> tuple[int, ...]:
    said = os.confstr("CS_GNU_LIBC_VERSION") or ""
    return tuple(int(p) for p in said.split()[-1].split("."))


def test_pip_on_an_older_glibc_refuses_the_manylinux_2_43_wheel(tmp_path):
    result = repair_wheel(wheel_needing(tmp_path, "2.43"), tmp_path / "repaired", components=SETTINGS.components)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # pip as a user has it, without this machine's pip configuration (its own index and wheel folders).
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_CONFIG_FILE": os.devnull,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

    def pip(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", *args],
                              capture_output=True, text=True, env=env, timeout=300)

    by_file = pip("--dry-run", str(result.wheel))
    by_name = pip("--dry-run", "--find-links", str(result.wheel.parent), "onnxruntime-ep-probe")
    if glibc_here() < (2, 43):
        assert by_file.returncode != 0 and \
            f"ERROR: {result.wheel.name} is not a supported wheel on this platform." in by_file.stderr, by_file.stderr
        assert by_name.returncode != 0 and "ERROR: No matching distribution found for onnxruntime-ep-probe" in \
            by_name.stderr, by_name.stderr
    else:
        assert by_file.returncode == 0 and by_name.returncode == 0, by_file.stderr + by_name.stderr
    # For a platform with glibc 2.43 the same pip takes it: the refusal is the tag's, the wheel is whole.
    target = pip("--no-deps", "--only-binary=:all:", "--platform", "manylinux_2_43_x86_64", "--target",
                 str(tmp_path / "site"), str(result.wheel))
    assert target.returncode == 0, target.stderr
    assert (tmp_path / "site" / "onnxruntime_ep_probe" / "libprobe-ep.so").is_file()
