"""Build roots from a small package set (debootstrap minbase sid + `hello`): made once by two processes
racing for it, cached, recorded exactly and diffed; commands run in it with host paths bound at the same
paths, the root read-only and nothing left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests.support.tools import ROOT, need
from toolkit.buildroot import ENV_BUILDROOT, ensure_root, make, record, run_in_root
from toolkit.recipe import packageset
from toolkit.util.errors import ToolkitError

TINY = """\
# a minimal root: what the cache, the record and the diff are proven on
[root]
suite = "sid"
apt_suites = ["sid"]
apt_options = ['Acquire::Check-Valid-Until "false";']
path_exclude = ["/usr/share/doc/*"]
path_include = ["/usr/share/doc/*/copyright"]

[packages]
tiny = ["hello"]
"""


def _toolkit(*args: str, env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, **kw)


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    """(package set file, cache dir, root, env, the two makers' stderr), made by two racing processes."""
    need("debootstrap")
    need("bwrap", "bubblewrap")
    base = tmp_path_factory.mktemp("buildroot")
    spec = base / "tiny.toml"
    spec.write_text(TINY)
    cache = base / "cache"
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(cache)}
    env.pop(ENV_BUILDROOT, None)
    makers = [subprocess.Popen([sys.executable, "-m", "toolkit", "root", "make", str(spec)], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [m.communicate(timeout=900) for m in makers]
    for m, (_out, err) in zip(makers, outs, strict=False):
        assert m.returncode == 0, err
    paths = {out.strip() for out, _ in outs}
    assert len(paths) == 1, paths
    return spec, cache, Path(paths.pop()), env, [err for _, err in outs]


@pytest.fixture
def in_cache(tiny_root, monkeypatch):
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tiny_root[1]))
    monkeypatch.delenv(ENV_BUILDROOT, raising=False)
    return tiny_root


# -- making, caching, recording -------------------------------------------------------------------------

def test_two_processes_make_the_root_once(tiny_root):
    spec, cache, root, env, errs = tiny_root
    made = [e for e in errs if "debootstrap --variant=minbase sid" in e]
    assert len(made) == 1, errs                      # one debootstrap, the other process waited and reused
    assert "made by another process" in "".join(errs)
    assert root.parent == cache / "roots" and root.name.startswith("tiny-")
    assert not list(root.parent.glob(".tiny-*"))     # no half-made root left beside it
    assert (root / "usr/bin/hello").is_file()


def test_made_root_is_reused_without_debootstrap(tiny_root):
    spec, cache, root, env, _ = tiny_root
    start = time.monotonic()
    again = _toolkit("root", "make", str(spec), env=env, timeout=60)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == str(root)
    assert "debootstrap" not in again.stderr and time.monotonic() - start < 30


def test_record_holds_every_installed_package(in_cache):
    spec, cache, root, env, _ = in_cache
    facts = make.info(root)
    packages = facts["packages"]
    assert packages == record.query(root)
    assert {"hello", "dpkg", "libc6", "apt"} <= set(packages)
    status = (root / "var/lib/dpkg/status").read_text()
    assert "Package: hello\nStatus: install ok installed" in status
    assert f"Version: {packages['hello']}" in status
    assert facts["package_set"] == packageset.load(spec).digest()
    assert facts["seconds"]["debootstrap"] > 0 and facts["bytes"] > 50 * 2**20
    # apt as declared: the package set's options, the archive only in the cache
    assert (root / "etc/apt/apt.conf.d/90toolkit").read_text() == 'Acquire::Check-Valid-Until "false";\n'
    assert not list((root / "var/cache/apt/archives").glob("*.deb"))
    assert list((cache / "roots/apt-archives").glob("hello_*.deb"))
    assert not (root / "etc/dpkg/dpkg.cfg.d/toolkit-unsafe-io").exists()
    # path_exclude: dpkg left the docs out, the package still counts as installed; path_include took the
    # copyright file back
    assert (root / "usr/bin/hello").is_file() and not (root / "usr/share/doc/hello/NEWS.gz").exists()
    assert (root / "usr/share/doc/hello/copyright").is_file()
    assert [p.name for p in (root / "usr/share/doc/hello").iterdir()] == ["copyright"]
    assert (root / "usr/share/info/hello.info.gz").is_file()


def test_lock_then_diff_names_each_changed_package(in_cache, tmp_path):
    spec, cache, root, env, _ = in_cache
    lock = spec.with_suffix(".lock")
    wrote = _toolkit("root", "lock", str(spec), env=env)
    assert wrote.returncode == 0, wrote.stderr
    digest, locked = record.read_lock(lock)
    assert digest == packageset.load(spec).digest() and locked == record.query(root)
    same = _toolkit("root", "diff", str(spec), env=env)
    assert same.returncode == 0 and same.stdout == "", same.stdout + same.stderr

    edited = dict(locked)
    edited["hello"] = "0.1-1"            # the lock says an older hello
    edited["libgone1"] = "1.0-1"         # ... a package the root no longer has
    del edited["apt"]                    # ... and lacks one the root has
    other = tmp_path / "other.lock"
    record.write_lock(other, "tiny", digest, edited)
    proc = _toolkit("root", "diff", str(spec), "--lock", str(other), env=env)
    assert proc.returncode == 1
    lines = [line.split() for line in proc.stdout.splitlines()]
    assert lines == [["added", "apt", locked["apt"]], ["changed", "hello", "0.1-1", "->", locked["hello"]],
                     ["removed", "libgone1", "1.0-1"]]
    assert "3 packages differ" in proc.stderr


def test_locked_rebuild_refuses_a_root_that_differs(in_cache):
    spec, cache, root, env, _ = in_cache
    loaded = packageset.load(spec)
    packages = record.query(root)
    record.write_lock(loaded.lock_file, "tiny", loaded.digest(), {**packages, "hello": "0.1-1"})
    with pytest.raises(ToolkitError, match=r"differs from .*tiny.lock in 1 packages:\n\s+changed\s+hello\s+"
                                           rf"0\.1-1 -> {packages['hello']}"):
        make._check_lock(loaded, packages, locked=True)
    record.write_lock(loaded.lock_file, "tiny", "0" * 64, packages)
    with pytest.raises(ToolkitError, match="written for another package set"):
        make._check_lock(loaded, packages, locked=True)


def test_changed_package_set_is_another_root(tiny_root, tmp_path):
    spec = packageset.load(tiny_root[0])
    other = tmp_path / "tiny.toml"
    other.write_text(TINY.replace('"hello"', '"hello", "file"'))
    commented = tmp_path / "sub"
    commented.mkdir()
    (commented / "tiny.toml").write_text("# only a comment differs\n" + TINY)
    assert packageset.load(other).digest() != spec.digest()
    assert packageset.load(commented / "tiny.toml").digest() == spec.digest()


# -- running inside ---------------------------------------------------------------------------------------

def _mounts() -> list[str]:
    return Path("/proc/self/mountinfo").read_text().splitlines()


def test_binds_at_the_same_path_and_root_read_only(in_cache, tmp_path):
    spec, cache, root, env, _ = in_cache
    before = _mounts()
    data = tmp_path / "project"
    data.mkdir()
    (data / "in.txt").write_text("from the host\n")
    proc = run_in_root(root, ["sh", "-c", f"cat {data}/in.txt; hello > {data}/out.txt; pwd"],
                       binds=[data], cwd=data, capture=True)
    assert proc.stdout == f"from the host\n{data}\n"
    assert (data / "out.txt").read_text() == "Hello, world!\n"
    ro = run_in_root(root, ["touch", "/usr/new-file"], check=False, capture=True)
    assert ro.returncode != 0 and "Read-only file system" in ro.stderr
    assert not (root / "usr/new-file").exists()
    assert not (root / str(data).lstrip("/")).exists()      # no mount point made in the root
    assert _mounts() == before


def test_bind_below_a_folder_of_the_root_leaves_the_root_untouched(in_cache):
    spec, cache, root, env, _ = in_cache
    host = Path("/var/tmp") / f"toolkit-bind-{os.getpid()}"
    host.mkdir()
    try:
        (host / "x").write_text("x\n")
        listing = sorted(os.listdir(root / "var/tmp"))
        proc = run_in_root(root, ["sh", "-c", f"cat {host}/x; ls /var/lib/dpkg/status"], binds=[host], capture=True)
        assert proc.stdout == "x\n/var/lib/dpkg/status\n"      # the root's own /var is still there around it
        assert sorted(os.listdir(root / "var/tmp")) == listing
    finally:
        shutil.rmtree(host)


def test_private_tmp_clean_env_and_cache(in_cache, monkeypatch):
    spec, cache, root, env, _ = in_cache
    monkeypatch.setenv("TOOLKIT_HOST_ONLY", "1")
    marker = f"toolkit-private-{os.getpid()}"
    proc = run_in_root(root, ["sh", "-c", f"touch /tmp/{marker}; env; echo pid1=$(cat /proc/1/comm)"],
                       env={"EXTRA": "yes"}, capture=True)
    inside = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    assert not Path("/tmp", marker).exists()
    assert "TOOLKIT_HOST_ONLY" not in inside and inside["EXTRA"] == "yes"
    assert inside["TOOLKIT_CACHE_DIR"] == str(cache) and inside["CCACHE_DIR"] == str(cache / "ccache")
    assert inside["pid1"] == "bwrap" and inside["HOME"] == "/tmp"
    assert (cache / "ccache").is_dir()


def test_failures_are_clear_errors(in_cache, tmp_path):
    spec, cache, root, env, _ = in_cache
    with pytest.raises(ToolkitError, match=r"failed \(exit 3\): `sh -c 'echo nope >&2; exit 3'`\n\s+nope"):
        run_in_root(root, ["sh", "-c", "echo nope >&2; exit 3"], capture=True)
    with pytest.raises(ToolkitError, match=f"{tmp_path}/missing: folder to bind into the build root does not exist"):
        run_in_root(root, ["true"], binds=[tmp_path / "missing"])
    with pytest.raises(ToolkitError, match="not a build root"):
        run_in_root(tmp_path, ["true"])


def test_killed_caller_leaves_no_process_or_mount(in_cache, tmp_path):
    spec, cache, root, env, _ = in_cache
    before = _mounts()
    seconds = str(3000 + os.getpid() % 1000)
    script = ("import sys; from toolkit.buildroot import run_in_root; "
              f"run_in_root(sys.argv[1], ['sleep', '{seconds}'], binds=[sys.argv[2]])")
    caller = subprocess.Popen([sys.executable, "-c", script, str(root), str(tmp_path)], cwd=ROOT, env=env)

    def sleepers() -> list[str]:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and (proc / "cmdline").read_bytes() == f"sleep\0{seconds}\0".encode():
                    found.append(proc.name)
            except OSError:
                pass
        return found

    deadline = time.monotonic() + 30
    while not sleepers():
        assert time.monotonic() < deadline and caller.poll() is None, "the command never started"
        time.sleep(0.1)
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    deadline = time.monotonic() + 10
    while sleepers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sleepers() == []
    assert _mounts() == before


# -- naming and bad input -----------------------------------------------------------------------------------

def test_env_buildroot_is_taken_as_is(tmp_path, monkeypatch, tiny_root):
    monkeypatch.setenv(ENV_BUILDROOT, str(tiny_root[2]))
    assert ensure_root() == tiny_root[2]
    monkeypatch.setenv(ENV_BUILDROOT, str(tmp_path))
    with pytest.raises(ToolkitError, match=f"env TOOLKIT_BUILDROOT={tmp_path}: not a build root folder"):
        ensure_root()


@pytest.mark.parametrize("edit, message", [
    (('suite = "sid"', 'suite = "sid"\nsuit = "x"'), "key 'root.suit': unknown key"),
    (('tiny = ["hello"]', 'tiny = ["Hello World"]'), "key 'packages.tiny[0]': not a Debian package name"),
    (('tiny = ["hello"]', 'tiny = "hello"'), "key 'packages.tiny': expected an array of strings"),
    (('"false";', '"false"'), "key 'root.apt_options[0]': an apt.conf line ends with ';'"),
    (('apt_suites = ["sid"]', 'apt_suites = ["sid"]\n[[root.pin]]\npackages = ["x*"]\nrelease = "experimental"\n'
                              'priority = 990'), "key 'root.pin[0].release': expected apt's release selector"),
    (('suite = "sid"', 'mirror = "http://127.0.0.1:9/debian"\nsuite = "sid"'),
     "key 'root.mirror': a package set names no Debian mirror"),
    (('"/usr/share/doc/*"', '"usr/share/doc/*"'), "key 'root.path_exclude[0]': expected an absolute path glob"),
    (('"/usr/share/doc/*/copyright"', '"copyright"'), "key 'root.path_include[0]': expected an absolute path glob"),
])
def test_bad_package_set_names_file_and_key(tmp_path, edit, message):
    path = tmp_path / "bad.toml"
    path.write_text(TINY.replace(*edit))
    with pytest.raises(ToolkitError, match=f"{path}: {message}".replace("[", r"\[").replace("(", r"\(")):
        packageset.load(path)


def test_cli_errors_have_no_traceback(tmp_path):
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path)}
    env.pop(ENV_BUILDROOT, None)
    proc = _toolkit("root", "make", "no-such-root", env=env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown build root 'no-such-root'")
    assert "known roots: debian-sid-rocm" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "roots").exists()


def test_shipped_sid_rocm_set():
    spec = packageset.load("debian-sid-rocm")
    assert spec.file == ROOT / "containers/roots/debian-sid-rocm.toml"
    assert {"hipcc", "migraphx-dev", "libonnxruntime-dev", "libmiopen-dev", "libsafeint-dev"} <= set(spec.packages)
    assert spec.sources_list("http://127.0.0.1:9/debian") == ("deb http://127.0.0.1:9/debian sid main\n"
                                                              "deb http://127.0.0.1:9/debian experimental main\n")
    assert spec.preferences() == ("Package: libonnxruntime* python3-onnxruntime onnxruntime*\n"
                                  "Pin: release a=experimental\nPin-Priority: 990\n")
    if spec.lock_file.is_file():
        digest, packages = record.read_lock(spec.lock_file)
        assert digest == spec.digest(), "debian-sid-rocm.lock is stale: `python -m toolkit root lock`"
        assert set(spec.packages) <= set(packages)
        with open(spec.lock_file, "rb") as handle:
            assert tomllib.load(handle)["packages"]["hipcc"].startswith("7.0.2")
