"""The Debian mirror comes from TOOLKIT_DEBIAN_MIRROR or the machine's apt sources, never from code or data:
apt's two source formats read from a real folder, `debian:` URLs fetched through a real HTTP server on
127.0.0.1, a build root's package set whose digest does not depend on the mirror, and the .deb reader
(toolkit.sources.debian) that no longer imports the archive extractor back."""

from __future__ import annotations

import ast
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.http import FaultServer
from tests.support.tools import require_tool
from toolkit.recipe import packageset
from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import OrtPackage, OrtSettings, Requirements
from toolkit.sources.archive import unpack_pinned
from toolkit.sources.cache import Cache
from toolkit.sources.context import FetchContext
from toolkit.sources.download import DownloadOptions, fetch
from toolkit.sources.preflight import PreflightOptions, check
from toolkit.util.debian_mirror import ENV, apt_source_uris, debian_mirror, resolve_url
from toolkit.util.errors import ToolkitError

REPO = Path(__file__).resolve().parents[2]
FAST = DownloadOptions(connect_timeout=2, read_timeout=2, retries=1, backoff=0.01, progress=False)


def _apt(tmp_path: Path, sources_list: str = "", parts: dict[str, str] | None = None) -> Path:
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    if sources_list:
        (apt / "sources.list").write_text(sources_list)
    for name, text in (parts or {}).items():
        (apt / "sources.list.d" / name).write_text(text)
    return apt


DEB822 = """\
Types: deb-src
URIs: http://src.example.invalid/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://off.example.invalid/debian
Suites: bookworm
Enabled: no

Types: deb
# a comment inside a stanza
URIs: http://security.example.invalid/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
URIs:
 http://third-party.example.invalid/node_20.x
 http://mirror.example.invalid/debian/
Suites: bookworm
Components: main
"""


def test_deb822_sources_pick_the_first_enabled_debian_archive(tmp_path):
    apt = _apt(tmp_path, parts={"debian.sources": DEB822, "zz.list.disabled": "deb http://no.example.invalid/debian x"})
    mirror = debian_mirror(env={}, apt_dir=apt)
    assert mirror.url == "http://mirror.example.invalid/debian"
    assert mirror.origin == str(apt / "sources.list.d" / "debian.sources")
    assert [u for _, u in apt_source_uris(apt)] == ["http://security.example.invalid/debian-security",
                                                     "http://third-party.example.invalid/node_20.x",
                                                     "http://mirror.example.invalid/debian/"]


def test_sources_list_is_read_before_sources_list_d(tmp_path):
    one_line = ("# deb http://commented.example.invalid/debian sid main\n"
                "deb-src http://src.example.invalid/debian sid main\n"
                "deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://ftp.example.invalid/debian/ sid main\n")
    apt = _apt(tmp_path, one_line, {"debian.sources": DEB822})
    assert debian_mirror(env={}, apt_dir=apt).url == "http://ftp.example.invalid/debian"
    # A snapshot archive and apt's file: form count too.
    apt2 = _apt(tmp_path / "2", "deb http://snap.example.invalid/archive/debian/20250520T000000Z/ sid main\n")
    assert debian_mirror(env={}, apt_dir=apt2).url == "http://snap.example.invalid/archive/debian/20250520T000000Z"
    apt3 = _apt(tmp_path / "3", "deb file:/srv/debian sid main\n")
    assert debian_mirror(env={}, apt_dir=apt3).url == "file:///srv/debian"


def test_env_wins_and_no_mirror_says_what_to_set(tmp_path):
    apt = _apt(tmp_path, parts={"debian.sources": DEB822})
    assert debian_mirror(env={ENV: "http://127.0.0.1:9/debian/"}, apt_dir=apt).url == "http://127.0.0.1:9/debian"
    assert debian_mirror(env={ENV: "http://127.0.0.1:9/debian"}, apt_dir=apt).origin == f"env {ENV}"
    with pytest.raises(ToolkitError, match=f"env {ENV}=deb.example: expected the Debian archive's base URL"):
        debian_mirror(env={ENV: "deb.example"}, apt_dir=apt)
    only_others = _apt(tmp_path / "o", "deb http://third-party.example.invalid/node_20.x nodistro main\n")
    for apt_dir, seen in ((only_others, "its sources name only http://third-party.example.invalid/node_20.x"),
                          (tmp_path / "none", "no enabled deb sources found there")):
        with pytest.raises(ToolkitError) as err:
            debian_mirror(env={}, apt_dir=apt_dir)
        assert f"{ENV} is not set" in err.value.message and seen in err.value.message
        assert err.value.hint.startswith(f"set {ENV}=http://")
    assert resolve_url("https://e/x.tar.gz", env={}, apt_dir=tmp_path / "none") == "https://e/x.tar.gz"
    assert resolve_url("debian:pool/main/x/x.deb", env={ENV: "http://m/debian"}) == "http://m/debian/pool/main/x/x.deb"


# -- debian: URLs fetched from the mirror ----------------------------------------------------------------------

def _deb(tmp_path: Path) -> bytes:
    require_tool(shutil.which("dpkg-deb") is not None, "dpkg-deb is needed (apt-get install dpkg)")
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text("Package: libdemo-dev\nVersion: 1.0\nArchitecture: all\n"
                                             "Maintainer: t <t@example.org>\nDescription: test\n")
    for rel in ("usr/include/onnxruntime/onnxruntime_c_api.h", "usr/lib/cmake/onnxruntime/onnxruntimeConfig.cmake"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("/* demo */\n")
    out = tmp_path / "demo.deb"
    done = subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(root), str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out.read_bytes()


def test_debian_urls_are_fetched_from_the_resolved_mirror(tmp_path, monkeypatch):
    data = _deb(tmp_path)
    server = FaultServer()
    try:
        server.add("/debian/pool/main/d/demo/libdemo-dev_1.0_all.deb", data)
        monkeypatch.setenv(ENV, server.url("/debian"))
        sha = hashlib.sha256(data).hexdigest()
        url = "debian:pool/main/d/demo/libdemo-dev_1.0_all.deb"
        cache = Cache(tmp_path / "cache")
        got = fetch(url, sha, cache, options=FAST)
        assert got.read_bytes() == data and got.name == "libdemo-dev_1.0_all.deb"
        assert server.hits["/debian/pool/main/d/demo/libdemo-dev_1.0_all.deb"] == 1

        # ORT's package as the sample recipe writes it: a .deb of the Debian archive, unpacked, never installed.
        from toolkit.sources.components import fetch_ort

        ort = OrtSettings("1.0", (OrtPackage("linux-x64", PinnedArchive(url, sha256=sha, subdir="usr")),))
        prefix = fetch_ort(ort, FetchContext(cache, options=FAST), "linux-x64")
        assert (prefix / "include/onnxruntime/onnxruntime_c_api.h").is_file()
        # From the cache, the mirror is not needed at all.
        monkeypatch.delenv(ENV)
        server.stop()
        again = unpack_pinned(PinnedArchive(url, sha256=sha), FetchContext(cache, offline=True), tmp_path / "u", "d")
        assert (again / "usr/include/onnxruntime/onnxruntime_c_api.h").is_file()
    finally:
        server.stop()


def test_preflight_names_the_missing_debian_mirror(tmp_path, monkeypatch):
    import toolkit.util.debian_mirror as dm

    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr(dm, "APT_DIR", tmp_path / "no-apt")  # a machine whose apt names no Debian archive
    ort = OrtSettings("1.0", (OrtPackage("linux-x64", PinnedArchive("debian:pool/main/x/x.deb", sha256="a" * 64)),))
    resolved = check(Requirements(always=("ort",)), [], PreflightOptions(platform="linux-x64", env={}), ort,
                     FetchContext(Cache(tmp_path / "c")))
    assert len(resolved.problems) == 1 and f"set {ENV}=" in resolved.problems[0]
    assert "debian:pool/main/x/x.deb" in resolved.problems[0]
    monkeypatch.setenv(ENV, "http://127.0.0.1:9/debian")
    ok = check(Requirements(always=("ort",)), [], PreflightOptions(platform="linux-x64", env={}), ort,
               FetchContext(Cache(tmp_path / "c")))
    assert not ok.problems and f"from the Debian mirror http://127.0.0.1:9/debian (env {ENV})" in ok.lines()[0]


def test_sample_recipe_names_no_mirror_host():
    from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe

    ort = load_recipe(find_recipe("amdgpu-ep", PROJECT_ROOT)).ort
    assert {p.archive.url.split("_")[-1] for p in ort.packages} == {"amd64.deb", "arm64.deb"}
    assert all(p.archive.url.startswith("debian:pool/main/o/onnxruntime/") and p.archive.sha256 for p in ort.packages)


# -- build roots: the set names no mirror, and its digest does not depend on one ---------------------------

def test_package_set_digest_does_not_depend_on_the_mirror(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, "http://127.0.0.1:9/debian")
    first = packageset.load("debian-sid-rocm")
    monkeypatch.setenv(ENV, "http://127.0.0.1:10/other/debian")
    second = packageset.load("debian-sid-rocm")
    assert first.digest() == second.digest()
    assert "127.0.0.1" not in first.sources_list("http://m/debian") and not hasattr(first, "mirror")


def test_no_mirror_host_in_code_or_data():
    # The Debian archive's own host, or a file:/// path of some machine, written into the project.
    pattern = re.compile(r"deb\.debian\.org|file:///")
    hits = []
    for folder in ("toolkit", "recipes", "containers", "benchmarks"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".toml", ".json", ".cmake", ".txt", "", ".Containerfile"):
                for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                    if pattern.search(line):
                        hits.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)


# -- the .deb reader and the extractor: one direction of import ----------------------------------------------

def test_debian_reader_does_not_import_the_extractor():
    code = ("import sys, toolkit.sources.debian\n"
            "assert 'toolkit.sources.extract' not in sys.modules, 'debian imports extract'\n"
            "import toolkit.sources.extract as e\n"
            "assert e.debian is sys.modules['toolkit.sources.debian']\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    tree = ast.parse((REPO / "toolkit/sources/debian.py").read_text())
    imported = [getattr(n, "module", None) or ",".join(a.name for a in n.names) for n in ast.walk(tree)
                if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [m for m in imported if "extract" in m or m == "toolkit.sources"], imported
