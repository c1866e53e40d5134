"""Debian packages as verified build inputs: .deb files read with the toolkit's own ar + tar reader, the
sample recipe's ORT headers (libonnxruntime-dev) against the archive's Packages index, and fetch_ort."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from tests.support.tools import require_tool
from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe
from toolkit.sources.cache import Cache
from toolkit.sources.components import fetch_ort
from toolkit.sources.context import FetchContext
from toolkit.sources.debian import ar_members, index_entry
from toolkit.sources.extract import extract_archive, extract_deb
from toolkit.util.debian_mirror import debian_mirror
from toolkit.util.errors import ToolkitError


def build_deb(tmp_path: Path, compression: str) -> Path:
    """A real .deb made by dpkg-deb: a header, a symlink, a control file."""
    require_tool(shutil.which("dpkg-deb") is not None, "dpkg-deb is needed (apt-get install dpkg)")
    root = tmp_path / f"pkg-{compression}"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text("Package: toolkit-test\nVersion: 1.0\nArchitecture: all\n"
                                             "Maintainer: t <t@example.org>\nDescription: test\n")
    (root / "usr" / "include" / "demo").mkdir(parents=True)
    (root / "usr" / "include" / "demo" / "demo.h").write_text("#define DEMO 27\n")
    (root / "usr" / "lib").mkdir()
    (root / "usr" / "lib" / "libdemo.so").symlink_to("libdemo.so.1")  # dangling, as in a -dev package
    deb = tmp_path / f"demo-{compression}.deb"
    done = subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", str(root), str(deb)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return deb


@pytest.mark.parametrize("compression", ["xz", "gzip", "none"])
def test_deb_data_tree_is_unpacked(tmp_path, compression):
    deb = build_deb(tmp_path, compression)
    names = [m.name for m in ar_members(deb)]
    assert names[0] == "debian-binary" and names[1].startswith("control.tar") and names[2].startswith("data.tar")
    out = extract_archive(deb, tmp_path / "out")  # the generic entry point recognizes a .deb
    assert (out / "usr" / "include" / "demo" / "demo.h").read_text() == "#define DEMO 27\n"
    assert (out / "usr" / "lib" / "libdemo.so").is_symlink()
    assert not (out / "DEBIAN").exists() and not (out / "control").exists()  # the data tree only


def test_zstd_deb_needs_a_decoder_and_says_which(tmp_path):
    deb = build_deb(tmp_path, "zstd")
    try:
        import zstandard  # noqa: F401
        have = True
    except ImportError:
        try:
            from compression import zstd  # type: ignore[import-not-found]  # noqa: F401
            have = True
        except ImportError:
            have = False
    if have:
        assert (extract_deb(deb, tmp_path / "out") / "usr" / "include" / "demo" / "demo.h").is_file()
    else:
        with pytest.raises(ToolkitError) as info:
            extract_deb(deb, tmp_path / "out")
        assert "data.tar.zst is zstd-compressed" in str(info.value) and "pip install zstandard" in info.value.hint
        assert not (tmp_path / "out").exists()


def test_not_a_deb_or_no_data_member_is_named(tmp_path):
    bogus = tmp_path / "x.deb"
    bogus.write_bytes(b"!<arch>\ndebian-binary   0           0     0     100644  4         `\n2.0\n")
    with pytest.raises(ToolkitError, match=r"expected one data.tar.\* member, found debian-binary"):
        extract_deb(bogus, tmp_path / "out")
    bogus.write_bytes(b"!<arch>\ndebian-binary   0     \n")
    with pytest.raises(ToolkitError, match="damaged ar member header"):
        extract_deb(bogus, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def sample_ort_packages():
    recipe = load_recipe(find_recipe("amdgpu-ep", PROJECT_ROOT))
    return recipe, recipe.ort


@pytest.mark.network  # Debian's live Packages index
@pytest.mark.parametrize("arch", ["amd64", "arm64"])
def test_recipe_pins_match_the_archive_packages_index(arch):
    # apt's own chain: the suite's Packages index names each .deb's pool path and sha256.
    _, ort = sample_ort_packages()
    package = next(p.archive for p in ort.packages if p.archive.url.endswith(f"_{arch}.deb"))
    try:
        mirror = debian_mirror()
    except ToolkitError as exc:
        require_tool(False, f"no Debian mirror here: {exc}")
    index_url = mirror.file_url(f"dists/experimental/main/binary-{arch}/Packages.xz")
    try:
        index = requests.get(index_url, timeout=60)
        index.raise_for_status()
    except requests.RequestException as exc:
        require_tool(False, f"Debian's archive is not reachable ({exc})")
    entry = index_entry(index.content, "libonnxruntime-dev", "1.27.1+dfsg-1")
    assert entry is not None, f"libonnxruntime-dev 1.27.1+dfsg-1 is no longer in {index_url}: re-pin the recipe"
    assert package.url == f"debian:{entry.filename}"  # the pool path, resolved against the Debian mirror
    assert package.sha256 == entry.sha256 and entry.architecture == arch


def test_fetch_ort_gives_the_headers_from_the_cache_and_works_offline(tmp_path):
    recipe, ort = sample_ort_packages()
    ctx = FetchContext.create(recipe.file)
    prefix = fetch_ort(ort, ctx, "linux-x64")
    header = prefix / "include" / "onnxruntime" / "onnxruntime_c_api.h"
    assert "#define ORT_API_VERSION 27" in header.read_text()
    assert (prefix / "include" / "onnxruntime" / "onnxruntime_ep_c_api.h").is_file()
    pin = ort.packages[0].archive.sha256
    assert prefix == ctx.cache.root / "unpacked" / pin / "usr"
    deb = ctx.cache.find_download(pin)
    assert hashlib.sha256(deb.read_bytes()).hexdigest() == pin
    # Offline from a cache that holds only the verified .deb: unpacked again, same headers.
    cache = Cache(tmp_path / "cache")
    (cache.root / "downloads" / deb.parent.name).mkdir(parents=True)
    shutil.copy2(deb, cache.root / "downloads" / deb.parent.name / deb.name)
    offline = fetch_ort(ort, FetchContext(cache, offline=True), "linux-x64")
    assert (offline / "include" / "onnxruntime" / "onnxruntime_c_api.h").read_bytes() == header.read_bytes()
    with pytest.raises(ToolkitError, match="offline: .*libonnxruntime-dev_1.27.1\\+dfsg-1_arm64.deb"):
        fetch_ort(ort, FetchContext(cache, offline=True), "linux-aarch64")


@pytest.mark.network
def test_a_windows_build_gets_ort_s_headers_with_its_windows_dll_and_a_cmake_config():
    """The real recipe's windows-x64 package: Debian's headers, the DLL of PyPI's win_amd64 wheel (`pypi:`), and a
    config find_package(onnxruntime) reads, put together once in the cache."""
    from toolkit.binary.pe import read_pe

    recipe = load_recipe(PROJECT_ROOT / "recipes" / "umbrella-ep-real.toml")
    assert recipe.ort is not None
    ctx = FetchContext.create(recipe.file)
    prefix = fetch_ort(recipe.ort, ctx, "windows-x64")
    assert prefix.parent == ctx.cache.root / "ort-windows"
    assert "#define ORT_API_VERSION 27" in (prefix / "include" / "onnxruntime" / "onnxruntime_c_api.h").read_text()
    assert "OrtGetApiBase" in read_pe(prefix / "lib" / "onnxruntime.dll").exports
    config = (prefix / "lib" / "cmake" / "onnxruntime" / "onnxruntimeConfig.cmake").read_text()
    assert "set(onnxruntime_VERSION 1.27.1)" in config
    assert 'IMPORTED_IMPLIB "${_ort_prefix}/lib/onnxruntime.dll"' in config
    assert fetch_ort(recipe.ort, ctx, "windows-x64") == prefix  # put together once
