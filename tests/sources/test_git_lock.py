"""Git sources from a local bare repository over file://, URL sources, lock files and pinning rules."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tarfile

import pytest

from tests.support.git_repos import bare_with_commits, git
from tests.support.tools import ROOT, need
from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import SourceSettings, source_from_argument
from toolkit.sources.cache import Cache
from toolkit.sources.context import FetchContext
from toolkit.sources.download import DownloadOptions
from toolkit.sources.lock import LockFile, lock_path_for, lock_recipe, recipe_urls, require_pinned
from toolkit.sources.source import resolve_source
from toolkit.util import tomlclass
from toolkit.util.errors import RecipeError, ToolkitError
from toolkit.util.fsutil import tree_digest
from toolkit.util.tomlread import load_toml

FAST = DownloadOptions(connect_timeout=2, read_timeout=2, retries=1, backoff=0.01, progress=False)


def _need_git():
    need("git")


@pytest.fixture
def repos(tmp_path):
    """A superproject with two commits whose older one has a submodule, both as bare repos."""
    _need_git()
    _, sub_commits = bare_with_commits(tmp_path, "sub", [{"sub.txt": "sub v1\n"}, {"sub.txt": "sub v2\n"}])
    work, _ = bare_with_commits(tmp_path, "super", [{"README": "v1\n"}])
    sub_url = (tmp_path / "sub.git").as_uri()
    git("submodule", "add", "-q", sub_url, "third_party/sub", cwd=work)
    git("-C", "third_party/sub", "checkout", "-q", sub_commits[0], cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "with submodule", cwd=work)
    pinned = git("rev-parse", "HEAD", cwd=work)
    (work / "README").write_text("v2 (tip, not pinned)\n")
    git("commit", "-q", "-am", "tip", cwd=work)
    bare = tmp_path / "super.git"
    git("push", "-q", str(bare), "HEAD:refs/heads/main", cwd=work)
    return bare.as_uri(), pinned


def test_git_source_shallow_fetches_pinned_commit_with_submodule(repos, tmp_path):
    url, pinned = repos
    ctx = FetchContext(Cache(tmp_path / "cache"))
    settings = SourceSettings(git=url, commit=pinned, submodules=True)
    tree = resolve_source(settings, ctx, tmp_path / "src")
    assert (tree / "README").read_text() == "v1\n"  # the pinned commit, not the tip
    assert (tree / "third_party/sub/sub.txt").read_text() == "sub v1\n"  # the submodule's pinned commit
    assert git("rev-parse", "HEAD", cwd=tree) == pinned
    assert git("rev-parse", "--is-shallow-repository", cwd=tree) == "true"
    # From the cache, offline, into a fresh folder.
    offline = FetchContext(Cache(tmp_path / "cache"), offline=True)
    again = resolve_source(settings, offline, tmp_path / "src2")
    assert (again / "third_party/sub/sub.txt").read_text() == "sub v1\n"


def test_git_wrong_commit_names_url_and_commit(repos, tmp_path):
    url, _ = repos
    wrong = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(ToolkitError) as err:
        resolve_source(SourceSettings(git=url, commit=wrong), FetchContext(Cache(tmp_path / "cache")), tmp_path / "s")
    assert url in str(err.value) and wrong in str(err.value)
    assert not (tmp_path / "s").exists()
    assert not any((tmp_path / "cache" / "git").rglob(wrong))


def test_source_settings_read_strictly(tmp_path):
    def read(text):
        (tmp_path / "r.toml").write_text(text)
        return tomlclass.read(SourceSettings, load_toml(tmp_path / "r.toml").table("source"))

    with pytest.raises(RecipeError, match="exactly one of 'path', 'url', 'git'"):
        read('[source]\npath = "x"\nurl = "https://e/x.tar.gz"\n')
    with pytest.raises(RecipeError, match="key 'source.commit': expected a full 40-hex commit"):
        read('[source]\ngit = "https://e/x.git"\ncommit = "main"\n')
    with pytest.raises(RecipeError, match="key 'source.sha256': expected 64 lowercase hex"):
        read('[source]\nurl = "https://e/x.tar.gz"\nsha256 = "abc"\n')
    with pytest.raises(RecipeError, match="key 'source.shaa256': unknown key"):
        read('[source]\nurl = "https://e/x.tar.gz"\nshaa256 = "abc"\n')
    assert read('[source]\nurl = "https://e/x.tar.gz"\n').sha256 is None
    assert source_from_argument(str(tmp_path)).path == tmp_path.resolve()
    assert source_from_argument("https://e/x.tar.gz#sha256=" + "a" * 64).sha256 == "a" * 64
    with pytest.raises(RecipeError, match="git\\+URL@COMMIT"):
        source_from_argument("git+https://e/x.git@main")


def _tarball(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_lock_pins_unpinned_urls_once_and_release_refuses_before(server, tmp_path):
    src = _tarball({"tree-1/CMakeLists.txt": b"project(tree)\n"})
    dep = _tarball({"dep-2/CMakeLists.txt": b"project(dep)\n"})
    pinned = _tarball({"p/CMakeLists.txt": b"project(p)\n"})
    src_url, dep_url = server.add("/tree-1.tar.gz", src), server.add("/dep-2.tar.gz", dep)
    pinned_url = server.add("/p.tar.gz", pinned)
    recipe = tmp_path / "real.toml"
    recipe.write_text(
        f'[recipe]\nname = "real"\n[source]\nurl = "{src_url}"\n'
        f'[[fetchcontent]]\nname = "dep"\nurl = "{dep_url}"\n'
        f'[[fetchcontent]]\nname = "p"\nurl = "{pinned_url}"\nsha256 = "{hashlib.sha256(pinned).hexdigest()}"\n'
    )
    items = recipe_urls(recipe)
    with pytest.raises(ToolkitError) as err:
        require_pinned(items, LockFile.for_recipe(recipe), recipe)
    assert src_url in str(err.value) and dep_url in str(err.value) and pinned_url not in str(err.value)
    assert "nox -s lock" in str(err.value)

    cache = Cache(tmp_path / "cache")
    result = lock_recipe(recipe, cache, options=FAST)
    assert result.path == lock_path_for(recipe) == tmp_path / "real.lock.toml"
    lock = LockFile.for_recipe(recipe)
    # The FetchContent dependency is pinned by its unpacked content, which a mirror's re-packed archive shares.
    unpacked = tmp_path / "dep-unpacked"
    unpacked.mkdir()
    (unpacked / "CMakeLists.txt").write_bytes(b"project(dep)\n")
    assert lock.pins == {src_url: hashlib.sha256(src).hexdigest()}
    assert lock.contents == {dep_url: tree_digest(unpacked)}
    require_pinned(items, lock, recipe)  # now passes
    assert server.hits["/p.tar.gz"] == 0  # pinned in the recipe: not downloaded by lock

    again = lock_recipe(recipe, cache, options=FAST)
    assert again.added == {} and set(again.kept) == {src_url, dep_url}
    assert server.hits["/tree-1.tar.gz"] == 1 and server.hits["/dep-2.tar.gz"] == 1

    # A release build resolves the source through the lock, from the cache, with the network cut.
    server.stop()
    server.stop = lambda: None
    ctx = FetchContext(cache, offline=True, lock=lock, release=True, options=FAST)
    tree = resolve_source(tomlclass.read(SourceSettings, load_toml(recipe).table("source")), ctx,
                          tmp_path / "build" / "source")
    assert (tree / "CMakeLists.txt").read_bytes() == b"project(tree)\n"


def test_release_refuses_unpinned_source_at_fetch_time(server, tmp_path):
    url = server.add("/x.tar.gz", _tarball({"x/a": b"a"}))
    ctx = FetchContext(Cache(tmp_path / "cache"), release=True, options=FAST)
    with pytest.raises(ToolkitError) as err:
        resolve_source(SourceSettings(archive=PinnedArchive(url)), ctx, tmp_path / "src")
    assert url in str(err.value) and "release builds refuse unpinned" in str(err.value)
    assert server.hits["/x.tar.gz"] == 0
    # A development build downloads it, with a warning naming the checksum to pin.
    dev = FetchContext(Cache(tmp_path / "cache"), options=FAST)
    tree = resolve_source(SourceSettings(archive=PinnedArchive(url)), dev, tmp_path / "src")
    assert (tree / "a").read_bytes() == b"a"


def test_url_source_is_unpacked_once(server, tmp_path):
    data = _tarball({"t/f.txt": b"f"})
    url = server.add("/t.tar.gz", data)
    ctx = FetchContext(Cache(tmp_path / "cache"), options=FAST)
    settings = SourceSettings(archive=PinnedArchive(url, sha256=hashlib.sha256(data).hexdigest()))
    tree = resolve_source(settings, ctx, tmp_path / "src")
    stamp_mtime = (tmp_path / ".src.source.json").stat().st_mtime_ns
    (tree / "f.txt").touch()
    before = (tree / "f.txt").stat().st_mtime_ns
    resolve_source(settings, ctx, tmp_path / "src")
    assert (tree / "f.txt").stat().st_mtime_ns == before  # not unpacked again
    assert (tmp_path / ".src.source.json").stat().st_mtime_ns == stamp_mtime


def test_corrupt_lock_file_is_a_recipe_error(tmp_path):
    lock = tmp_path / "r.lock.toml"
    lock.write_text('version = 1\n[sha256]\n"https://e/x.tar.gz" = "nothex"\n')
    with pytest.raises(RecipeError, match="r.lock.toml.*expected 64 lowercase hex"):
        LockFile.load(lock)


def test_lock_offline_reads_a_file_mirror_and_says_what_it_left_unpinned(tmp_path):
    """`lock --offline` pins what a file:// mirror holds, touches no network, and a FetchContent archive the
    mirror lacks is left unpinned with a warning and a closing line naming it."""
    src = _tarball({"tree-1/CMakeLists.txt": b"project(tree)\n"})
    mirror = tmp_path / "mirror"
    (mirror / "example.invalid" / "a").mkdir(parents=True)
    (mirror / "example.invalid" / "a" / "tree-1.tar.gz").write_bytes(src)
    recipe = tmp_path / "real.toml"
    recipe.write_text('[recipe]\nname = "real"\n[source]\nurl = "https://example.invalid/a/tree-1.tar.gz"\n'
                      '[[fetchcontent]]\nname = "winonly"\nurl = "https://example.invalid/b/dep-2.tar.gz"\n')
    argv = [sys.executable, "-m", "toolkit", "lock", "--recipe", str(recipe), "--mirror", mirror.as_uri(),
            "--offline", "--cache-dir", str(tmp_path / "cache")]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"pinned {hashlib.sha256(src).hexdigest()}  https://example.invalid/a/tree-1.tar.gz" in proc.stdout
    assert ("fetchcontent winonly: left unpinned: offline: https://example.invalid/b/dep-2.tar.gz has no sha256 "
            "yet, and no file:// mirror holds it") in proc.stderr
    assert "left unpinned: 1 URL(s) could not be read (warned above): fetchcontent winonly;" in proc.stdout
    assert LockFile.for_recipe(recipe).pins == {
        "https://example.invalid/a/tree-1.tar.gz": hashlib.sha256(src).hexdigest()}
