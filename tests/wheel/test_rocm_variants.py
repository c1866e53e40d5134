"""ROCm variants: `[wheel.rocm_variants]` read strictly, the variant chosen by the HIP soname the libraries link,
another system's build by `[wheel.platform_variants]`, and the meta-package wheel that installs the variant of the
system it is installed on (installed by a real pip, read back as metadata)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from importlib.metadata import PathDistribution

import pytest
from packaging.requirements import Requirement

from toolkit.recipe.wheel import WheelSettings
from toolkit.util.errors import ToolkitError
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import Table
from toolkit.wheel.meta import meta_wheel_bytes, write_meta_wheel

WHEEL = {"distribution": "onnxruntime-ep-amdgpu", "version": "0.2.0",
         "components": [{"library": "amdgpu-ep", "ep_name": "AMDGPUExecutionProvider"}],
         "rocm_variants": {"rocm6": "libamdhip64.so.6", "rocm7": "libamdhip64.so.7"}}


def _settings(**changes):
    return read(WheelSettings, Table({**WHEEL, **changes}, "r.toml", "wheel"))


def test_the_linked_soname_names_the_variant():
    settings = _settings().for_linked(("libamdhip64.so.7", "libmigraphx_c.so.3"), "here")
    assert (settings.distribution, settings.variant) == ("onnxruntime-ep-amdgpu-rocm7", "rocm7")
    plain = _settings(rocm_variants={})
    assert plain.for_linked(("libamdhip64.so.6",), "here") is plain


def test_a_soname_no_variant_names_is_an_error_listing_them():
    with pytest.raises(ToolkitError, match=r"here: the libraries link libamdhip64\.so\.5, which no "
                                           r"\[wheel.rocm_variants\] entry names \(rocm6 = 'libamdhip64.so.6'"):
        _settings().for_linked(("libamdhip64.so.5",), "here")


@pytest.mark.parametrize("variants, message", [
    ({"ROCm6": "libamdhip64.so.6"}, "key 'wheel.rocm_variants.ROCm6': expected a lower-case name"),
    ({"rocm6": "libamdhip64.so"}, "key 'wheel.rocm_variants.rocm6': expected a versioned soname"),
])
def test_bad_variants_name_the_key(variants, message):
    with pytest.raises(ToolkitError, match=message):
        _settings(rocm_variants=variants)


def test_the_meta_wheel_is_reproducible_and_pip_installs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    path = write_meta_wheel(_settings(), tmp_path / "dist")
    assert path.name == "onnxruntime_ep_amdgpu-0.2.0-py3-none-any.whl"
    assert meta_wheel_bytes(_settings(), 1700000000)[1] == path.read_bytes()
    assert zipfile.ZipFile(path).namelist()[-1].endswith(".dist-info/RECORD")
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(target),
                    str(path)], check=True)
    dist = PathDistribution(next(target.glob("*.dist-info")))
    assert dist.metadata["Name"] == "onnxruntime-ep-amdgpu" and dist.version == "0.2.0"
    # No extras: plain `pip install onnxruntime-ep-amdgpu` is the newest ROCm major's build, the other by its name.
    assert dist.metadata.get_all("Provides-Extra") is None
    assert dist.requires == ["onnxruntime-ep-amdgpu-rocm7==0.2.0"]
    text = dist.metadata.get_payload()
    assert "- ROCm with `libamdhip64.so.6`: `pip install onnxruntime-ep-amdgpu-rocm6`" in text
    assert "- ROCm with `libamdhip64.so.7`: `pip install onnxruntime-ep-amdgpu` (`onnxruntime-ep-amdgpu-rocm7`)" in text


def test_the_default_variant_is_the_newest_rocm_major_whatever_the_order():
    newest_first = {"rocm7": "libamdhip64.so.7", "rocm6": "libamdhip64.so.6"}
    assert _settings(rocm_variants=newest_first).default_variant == "rocm7"
    two_digits = {"rocm10": "libamdhip64.so.10", "rocm9": "libamdhip64.so.9"}
    assert _settings(rocm_variants=two_digits).default_variant == "rocm10"


def test_no_variants_no_meta_wheel(tmp_path):
    with pytest.raises(ToolkitError, match="has no rocm_variants, so there is no meta-package"):
        write_meta_wheel(_settings(rocm_variants={}), tmp_path)


def test_a_windows_build_is_its_platform_variant():
    settings = _settings(platform_variants={"windows": "directml"})
    windows = settings.for_linked((), "here", "windows")
    assert (windows.distribution, windows.variant) == ("onnxruntime-ep-amdgpu-directml", "directml")
    assert settings.for_linked(("libamdhip64.so.7",), "here").variant == "rocm7"
    with pytest.raises(ToolkitError, match=r"here: a build for windows is a variant of its own, which no "
                                           r"\[wheel.platform_variants\] entry names"):
        _settings().for_linked((), "here", "windows")


@pytest.mark.parametrize("variants, message", [
    ({"linux": "plain"}, "key 'wheel.platform_variants.linux': expected an operating system other than Linux"),
    ({"windows": "DirectML"}, "key 'wheel.platform_variants.windows': expected a lower-case name"),
    ({"windows": "rocm7"}, "rocm7: a name of \\[wheel.rocm_variants\\] too"),
])
def test_bad_platform_variants_name_the_key(variants, message):
    with pytest.raises(ToolkitError, match=message):
        _settings(platform_variants=variants)


def test_the_meta_wheel_installs_the_rocm_variant_on_linux_and_the_platform_variant_elsewhere(tmp_path):
    settings = _settings(platform_variants={"windows": "directml"})
    path = write_meta_wheel(settings, tmp_path / "dist")
    # A stand-in for the rocm7 wheel: pip must take it, and must not look for the Windows variant, which is absent.
    stand_in = tmp_path / "dist" / "onnxruntime_ep_amdgpu_rocm7-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(stand_in, "w") as archive:
        info = "onnxruntime_ep_amdgpu_rocm7-0.2.0.dist-info"
        archive.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: onnxruntime-ep-amdgpu-rocm7\n"
                                             "Version: 0.2.0\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(path.parent),
                    "--target", str(target), "onnxruntime-ep-amdgpu==0.2.0"], check=True)
    assert sorted(p.name for p in target.glob("*.dist-info")) == [
        "onnxruntime_ep_amdgpu-0.2.0.dist-info", "onnxruntime_ep_amdgpu_rocm7-0.2.0.dist-info"]
    dist = PathDistribution(target / "onnxruntime_ep_amdgpu-0.2.0.dist-info")
    requires = [Requirement(r) for r in dist.requires or []]
    chosen = {system: [r.name for r in requires if r.marker is None or r.marker.evaluate({"sys_platform": system})]
              for system in ("linux", "win32")}
    assert chosen == {"linux": ["onnxruntime-ep-amdgpu-rocm7"], "win32": ["onnxruntime-ep-amdgpu-directml"]}
    assert dist.metadata["Summary"].endswith("(installs the rocm7 build on Linux, the directml build on Windows)")
    assert "- Windows: `pip install onnxruntime-ep-amdgpu` installs `onnxruntime-ep-amdgpu-directml` there" in \
        dist.metadata.get_payload()


def _variant_wheel(folder, variant, license_text):
    """A variant's wheel with a license, as the wheel stage writes one (only what the meta-package reads)."""
    info = f"onnxruntime_ep_amdgpu_{variant}-0.2.0.dist-info"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"onnxruntime_ep_amdgpu_{variant}-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{info}/METADATA", "Metadata-Version: 2.4\nName: x\nVersion: 0.2.0\n"
                                             f"License-Expression: MIT AND {license_text}\nLicense-File: LICENSE\n\n")
        archive.writestr(f"{info}/licenses/LICENSE", f"{variant}'s license\n")
    return path


def test_the_meta_wheel_carries_the_default_variants_license_else_another_variants(tmp_path):
    """A release of the Windows entry alone has no ROCm 7 wheel beside the meta-package: it takes the license of the
    variant that is there, so an index is never sent a meta-package without one."""
    settings = _settings(platform_variants={"windows": "directml"})
    dist = tmp_path / "dist"
    _variant_wheel(dist, "directml", "LicenseRef-Microsoft-DirectML")
    meta = zipfile.ZipFile(write_meta_wheel(settings, dist))
    info = next(n.split("/")[0] for n in meta.namelist() if n.endswith("/METADATA"))
    metadata = meta.read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT AND LicenseRef-Microsoft-DirectML\n" in metadata, metadata
    assert meta.read(f"{info}/licenses/LICENSE") == b"directml's license\n"
    _variant_wheel(dist, "rocm7", "Zlib")
    meta = zipfile.ZipFile(write_meta_wheel(settings, dist))
    assert "License-Expression: MIT AND Zlib\n" in meta.read(f"{info}/METADATA").decode()
    assert meta.read(f"{info}/licenses/LICENSE") == b"rocm7's license\n"
