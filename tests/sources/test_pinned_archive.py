"""One pinned-archive type for every archive a recipe names: the same keys and errors in [source],
[[fetchcontent]], [[ort.package]] and [[compile_check.dep]]; a content pin over `paths` that upstream's whole
archive and a mirror's subset share (over a real HTTP server on 127.0.0.1); the lock pinning such an archive
by content; and ORT's recipe verified against the shared artifact mirror."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile

import pytest

from tests.support.http import FaultServer
from tests.support.real_umbrella_support import MIRROR
from tests.support.tools import require_tool
from toolkit.recipe.compile_check import CompileCheckSettings
from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe
from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import FetchContentDep, OrtPackage, OrtSettings, SourceSettings
from toolkit.sources.archive import unpack_pinned
from toolkit.sources.cache import Cache
from toolkit.sources.context import FetchContext
from toolkit.sources.download import DownloadOptions
from toolkit.sources.lock import LockFile, lock_recipe, recipe_urls, require_pinned
from toolkit.sources.source import resolve_source
from toolkit.util.errors import RecipeError, ToolkitError
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml

FAST = DownloadOptions(connect_timeout=2, read_timeout=2, retries=1, backoff=0.01, progress=False)
SHA = "ab" * 32
CONTENT = "cd" * 32


def _tar(files: dict[str, bytes], mtime: int = 0) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), mtime
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


# -- one reader, four holders -----------------------------------------------------------------------------

ARCHIVE_KEYS = (f'url = "https://example.invalid/x-1.0.tar.gz"\nsha256 = "{SHA}"\ncontent = "{CONTENT}"\n'
                'paths = ["include/**", "src/*.h"]\nstrip_components = 1\n')


def test_every_holder_reads_the_same_pinned_archive(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text(
        f"[source]\n{ARCHIVE_KEYS}\n"
        f'[[fetchcontent]]\nname = "x"\n{ARCHIVE_KEYS}\n'
        f'[ort]\nversion = "1.0"\n[[ort.package]]\nplatform = "linux-x64"\n{ARCHIVE_KEYS}\n'
        f'[compile_check]\ntargets = ["gfx942"]\nunits = ["**/*.cc"]\n[[compile_check.dep]]\nname = "x"\n'
        f'{ARCHIVE_KEYS}include = ["include"]\n'
    )
    root = load_toml(recipe)
    expected = PinnedArchive("https://example.invalid/x-1.0.tar.gz", SHA, CONTENT, ("include/**", "src/*.h"), 1)
    source = read(SourceSettings, root.table("source"))
    dep = read(FetchContentDep, root.tables("fetchcontent")[0])
    package = read(OrtPackage, root.table("ort").tables("package")[0])
    check = read(CompileCheckSettings, root.table("compile_check")).deps[0]
    assert source.archive == dep.archive == package.archive == check.archive == expected
    assert source.url == expected.url and source.sha256 == SHA  # what provenance records reads these


@pytest.mark.parametrize("line, message", [
    ('url = "ftp://example.invalid/x.tar.gz"', "key 'source.url': expected an http(s):// or file:// URL, or "
                                               "debian:<pool path>"),
    ('url = "debian:/pool/x.deb"', "key 'source.url': expected debian:<path in the Debian archive>"),
    ('url = "debian:pool/../x.deb"', "key 'source.url': expected debian:<path in the Debian archive>"),
    ('url = "https://e/x.tar.gz"\ncontent = "XYZ"', "key 'source.content': expected 64 lowercase hex digits"),
    ('url = "https://e/x.tar.gz"\npaths = []', "key 'source.paths': list at least one glob"),
    ('url = "https://e/x.tar.gz"\npaths = ["a/**", "../b"]', "key 'source.paths[1]': '..' leaves the tree"),
    ('url = "https://e/x.tar.gz"\npaths = ["/usr/**"]', "key 'source.paths[0]': expected a relative path glob"),
    ('url = "https://e/x.tar.gz"\nstrip_components = -1', "key 'source.strip_components': expected 0 or more"),
    ('url = "https://e/x.tar.gz"\npath = "x"', "expected exactly one of 'path', 'url', 'git'"),
])
def test_bad_archive_keys_name_file_and_key(tmp_path, line, message):
    recipe = tmp_path / "r.toml"
    recipe.write_text(f"[source]\n{line}\n")
    with pytest.raises(RecipeError) as err:
        read(SourceSettings, load_toml(recipe).table("source"))
    assert str(err.value).startswith(f"{recipe}: ") and message in str(err.value)


def test_compile_check_dep_must_be_pinned_in_the_recipe(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text('[compile_check]\ntargets = ["gfx942"]\nunits = ["**/*.cc"]\n'
                      '[[compile_check.dep]]\nname = "x"\nurl = "https://e/x.tar.gz"\n')
    with pytest.raises(RecipeError, match=r"key 'compile_check\.dep\[0\]\.url': https://e/x.tar.gz needs a pin"):
        read(CompileCheckSettings, load_toml(recipe).table("compile_check"))
    # A content pin is a pin too.
    recipe.write_text(recipe.read_text() + f'content = "{CONTENT}"\n')
    assert read(CompileCheckSettings, load_toml(recipe).table("compile_check")).deps[0].archive.content



# A dependency's host tool and a Windows package's DLL: tables inside the holders above, checked where read.
HOST_TOOL = 'target = "protoc"\ndefine = "ONNX_CUSTOM_PROTOC_EXECUTABLE"\n'
WINDOWS_DLL = f'url = "pypi:onnxruntime-1.27.0-cp312-cp312-win_amd64.whl"\nsha256 = "{SHA}"\npath = "capi/ort.dll"\n'


@pytest.mark.parametrize("section, change, message", [
    ("host_tool", ('"protoc"', '"pro toc"'),
     "key 'fetchcontent[0].host_tool.target': expected a CMake target name, got 'pro toc'"),
    ("host_tool", ('"ONNX_CUSTOM_PROTOC_EXECUTABLE"', '"1X"'),
     "key 'fetchcontent[0].host_tool.define': expected a CMake variable name, got '1X'"),
    ("host_tool", ('define = "ONNX_CUSTOM_PROTOC_EXECUTABLE"\n', ""),
     "key 'fetchcontent[0].host_tool.define': required, expected a string"),
    ("windows_dll", ("win_amd64.whl", "win_amd64"),
     "key 'ort.package[0].windows_dll.url': expected pypi:<a wheel's file name>"),
    ("windows_dll", ('path = "capi/ort.dll"\n', 'path = "capi/ort.dll"\nsubdir = "capi"\n'),
     "key 'ort.package[0].windows_dll.subdir': unknown key"),
])
def test_a_host_tool_and_a_windows_dll_are_checked_where_read(tmp_path, section, change, message):
    recipe = tmp_path / "r.toml"
    host_tool, windows_dll = HOST_TOOL, WINDOWS_DLL
    if section == "host_tool":
        host_tool = host_tool.replace(*change)
    else:
        windows_dll = windows_dll.replace(*change)
    good = (f'[[fetchcontent]]\nname = "protobuf"\n{ARCHIVE_KEYS}[fetchcontent.host_tool]\n{HOST_TOOL}'
            f'[ort]\nversion = "1.27.0"\n[[ort.package]]\nplatform = "windows-x64"\n{ARCHIVE_KEYS}'
            f'[ort.package.windows_dll]\n{WINDOWS_DLL}')
    recipe.write_text(good)
    root = load_toml(recipe)
    dep, ort = read(FetchContentDep, root.tables("fetchcontent")[0]), read(OrtSettings, root.table("ort"))
    assert dep.host_tool is not None and dep.host_tool.target == "protoc" and dep.host_tool.defines == {}
    dll = ort.packages[0].windows_dll
    assert dll is not None and dll.path == "capi/ort.dll" and dll.archive.sha256 == SHA
    recipe.write_text(good.replace(HOST_TOOL, host_tool).replace(WINDOWS_DLL, windows_dll))
    root = load_toml(recipe)
    with pytest.raises(RecipeError) as err:
        read(FetchContentDep, root.tables("fetchcontent")[0])
        read(OrtSettings, root.table("ort"))
    assert str(err.value).startswith(f"{recipe}: {message}"), str(err.value)

# -- a content pin over `paths`: upstream's whole archive and a mirror's subset ---------------------------

UPSTREAM = {  # upstream's tag archive: what the recipe reads, and more
    "proj-1.0/include/proj.h": b"int proj(void);\n",
    "proj-1.0/src/core/a.h": b"#define A 1\n",
    "proj-1.0/src/core/a.cc": b"int a;\n",
    "proj-1.0/docs/huge.md": b"not read by the recipe\n",
    "proj-1.0/tests/t.cc": b"int t;\n",
}
PATHS = ("include/**", "src/core/**")


def _subset(drop: tuple[str, ...] = ()) -> dict[str, bytes]:
    """A mirror's subset archive: other top folder, other order, the unread files left out, a note added."""
    files = {k.replace("proj-1.0/", "proj-1.0-subset/"): v for k, v in reversed(UPSTREAM.items())
             if "/docs/" not in k and "/tests/" not in k and not k.endswith(drop)}
    files["proj-1.0-subset/PROVENANCE.txt"] = b"a subset\n"
    return files


@pytest.fixture
def served(tmp_path):
    """(server, upstream URL, the digest over PATHS, a file:// mirror holding the subset at the URL's path)."""
    server = FaultServer()
    url = server.add("/proj/archive/refs/tags/v1.0.tar.gz", _tar(UPSTREAM, 7))
    mirror = tmp_path / "mirror"
    (mirror / "127.0.0.1" / "proj/archive/refs/tags/v1.0.tar.gz").parent.mkdir(parents=True)
    (mirror / "127.0.0.1" / "proj/archive/refs/tags/v1.0.tar.gz").write_bytes(_tar(_subset(), 99))
    ref = tmp_path / "ref"
    for name, data in UPSTREAM.items():
        (ref / name.split("/", 1)[1]).parent.mkdir(parents=True, exist_ok=True)
        (ref / name.split("/", 1)[1]).write_bytes(data)
    content = PinnedArchive(url, paths=PATHS).digest(ref)
    yield server, url, content, mirror
    server.stop()


def test_paths_pin_accepts_upstream_and_the_mirrors_subset(served, tmp_path):
    server, url, content, mirror = served
    source = SourceSettings(archive=PinnedArchive(url, content=content, paths=PATHS))
    whole = resolve_source(source, FetchContext(Cache(tmp_path / "c1"), options=FAST), tmp_path / "s1")
    assert (whole / "docs" / "huge.md").is_file()  # upstream's whole tree, verified over PATHS
    assert PinnedArchive(url, paths=()).digest(whole) != content  # the whole tree's digest is another
    server.stop()
    offline = FetchContext(Cache(tmp_path / "c2"), offline=True, mirrors=(mirror.as_uri(),), options=FAST)
    subset = resolve_source(source, offline, tmp_path / "s2")
    assert (subset / "src/core/a.h").read_bytes() == b"#define A 1\n" and not (subset / "docs").exists()
    # A second run does nothing (the stamp), and offline from the cache alone works too.
    assert resolve_source(source, FetchContext(Cache(tmp_path / "c2"), offline=True), tmp_path / "s3").is_dir()


def test_paths_pin_refuses_a_subset_missing_a_read_file(served, tmp_path):
    server, url, content, mirror = served
    target = mirror / "127.0.0.1" / "proj/archive/refs/tags/v1.0.tar.gz"
    target.write_bytes(_tar(_subset(drop=("a.h",))))
    ctx = FetchContext(Cache(tmp_path / "c"), offline=True, mirrors=(mirror.as_uri(),), options=FAST)
    with pytest.raises(ToolkitError) as err:
        unpack_pinned(PinnedArchive(url, content=content, paths=PATHS), ctx, tmp_path / "t", "source")
    text = str(err.value)
    assert url in text and f"but the pin is {content}" in text and "unpacks to content " in text
    assert "the digest of the files its 2 `paths` globs match" in text
    assert not (tmp_path / "t").exists()  # nothing unverified is left in place
    # A glob that matches nothing is named.
    target.write_bytes(_tar({"proj/include/proj.h": b"int proj(void);\n"}))
    with pytest.raises(ToolkitError, match=r"these match no file: src/core/\*\*"):
        unpack_pinned(PinnedArchive(url, content=content, paths=PATHS), ctx, tmp_path / "t", "source")


def test_lock_pins_an_archive_with_paths_by_content(served, tmp_path):
    server, url, content, _ = served
    recipe = tmp_path / "demo.toml"
    recipe.write_text(f'[recipe]\nname = "demo"\n[source]\nurl = "{url}"\npaths = {json.dumps(list(PATHS))}\n')
    items = recipe_urls(recipe)
    assert [(i.where, i.by_content) for i in items] == [("source", True)]
    with pytest.raises(ToolkitError, match="release builds need a sha256"):
        require_pinned(items, LockFile.for_recipe(recipe), recipe)
    lock_recipe(recipe, Cache(tmp_path / "cache"), options=FAST)
    lock = LockFile.for_recipe(recipe)
    assert lock.contents == {url: content} and lock.pins == {}
    require_pinned(items, lock, recipe)
    # A release build takes the lock's content pin for the recipe's archive.
    ctx = FetchContext(Cache(tmp_path / "cache"), lock=lock, release=True, options=FAST)
    tree = resolve_source(read(SourceSettings, load_toml(recipe).table("source")), ctx, tmp_path / "s")
    assert (tree / "include/proj.h").is_file()


def test_sha256_and_content_pins_are_both_checked(served, tmp_path):
    server, url, content, _ = served
    sha = hashlib.sha256(_tar(UPSTREAM, 7)).hexdigest()
    good = unpack_pinned(PinnedArchive(url, sha256=sha, content=content, paths=PATHS),
                         FetchContext(Cache(tmp_path / "c"), options=FAST), tmp_path / "d", "dep")
    assert (good / "include/proj.h").is_file()
    with pytest.raises(ToolkitError, match=f"but the pin is {'0' * 64}"):
        unpack_pinned(PinnedArchive(url, sha256=sha, content="0" * 64, paths=PATHS),
                      FetchContext(Cache(tmp_path / "c"), options=FAST), tmp_path / "e", "dep")


# -- ORT's recipe: upstream's URL, the mirror's subset, the content of what the recipe reads -------------

ORT_URL = "https://github.com/microsoft/onnxruntime/archive/refs/tags/v1.22.1.tar.gz"


def test_ort_recipe_names_upstream_and_its_pin_fits_the_mirrors_subset(tmp_path):
    recipe = load_recipe(find_recipe("onnxruntime-rocm-ep", PROJECT_ROOT))
    archive = recipe.source.archive
    assert archive.url == ORT_URL and archive.sha256 is None and archive.content and archive.paths
    hipify = recipe.hipify
    # Every glob the hipify stage reads lies inside the pinned paths.
    for glob in (*hipify.include, *hipify.overlay):
        assert any(glob.startswith(p.removesuffix("**")) for p in archive.paths), glob
    held = MIRROR / "github.com/microsoft/onnxruntime/archive/refs/tags/v1.22.1.tar.gz"
    require_tool(held.is_file(), f"the shared artifact mirror does not hold {held} (../shared beside the checkout)")
    ctx = FetchContext(Cache(tmp_path / "cache"), offline=True, mirrors=(MIRROR.as_uri(),), options=FAST)
    tree = resolve_source(recipe.source, ctx, tmp_path / "ort")
    assert (tree / "onnxruntime/core/providers/rocm/rocm_execution_provider.cc").is_file()
    assert archive.digest(tree) == archive.content and not archive.unmatched_paths(tree)
