"""Container sessions: engine detection, the engine command line, and a real podman run of a toolkit
session in an image built FROM scratch out of a local root filesystem (no registry is reachable)."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT, need
from toolkit.container import engine as container
from toolkit.container import local_rootfs
from toolkit.util.errors import ToolkitError

RECIPE = """\
[recipe]
name = "boxed"

[release]
python = ["3.11", "3.12", "3.13"]
features = [[], ["hipdnn"]]

[[release.target_set]]
name = "cdna"
targets = ["gfx90a", "gfx942"]
"""


def _need(tool: str) -> str:
    return need(tool, 'podman buildah runc')


def _fake_engines(tmp_path: Path, names: list[str]) -> str:
    """A PATH holding executables with the engines' names (never run: detection only looks them up)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in names:
        (bin_dir / name).write_text("#!/bin/sh\nexit 99\n")
        (bin_dir / name).chmod(0o755)
    return str(bin_dir)


def test_detect_prefers_podman_then_docker(tmp_path, monkeypatch):
    monkeypatch.delenv(container.ENV_ENGINE, raising=False)
    monkeypatch.setenv("PATH", _fake_engines(tmp_path, ["podman", "docker"]))
    assert container.detect_engine().name == "podman"
    monkeypatch.setenv(container.ENV_ENGINE, "docker")
    assert container.detect_engine().name == "docker"
    assert container.detect_engine("podman").name == "podman"  # an explicit --engine wins over env


def test_detect_errors_name_the_origin(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _fake_engines(tmp_path, ["docker"]))
    monkeypatch.setenv(container.ENV_ENGINE, "lxc")
    with pytest.raises(ToolkitError, match="env TOOLKIT_CONTAINER_ENGINE: unknown container engine 'lxc'"):
        container.detect_engine()
    monkeypatch.setenv(container.ENV_ENGINE, "podman")
    with pytest.raises(ToolkitError, match="'podman' is not installed"):
        container.detect_engine()
    monkeypatch.delenv(container.ENV_ENGINE)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ToolkitError, match="neither podman nor docker"):
        container.detect_engine()


def test_dry_run_prints_mounts_env_and_session(tmp_path, monkeypatch):
    path = _fake_engines(tmp_path, ["docker"])
    env = {**os.environ, "PATH": path + os.pathsep + os.environ["PATH"], "TOOLKIT_COMPILE_CACHE": "redis://c:6379",
           "CCACHE_DIR": "/host/ccache", "UNRELATED": "x"}
    env.pop(container.ENV_ENGINE, None)
    src = tmp_path / "src"
    src.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "container", "--engine", "docker", "--image", "img:1", "--dry-run",
         "--source", str(src), "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out"),
         "-e", "EXTRA=1", "release", "--", "--only", "cp311-cdna"],
        cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(proc.stdout)
    assert argv[:3] == [str(Path(path) / "docker"), "run", "--rm"]
    volumes = [argv[i + 1] for i, a in enumerate(argv) if a == "--volume"]
    assert volumes == [f"{ROOT}:/work/project", f"{src}:/work/source",
                       f"{tmp_path / 'cache'}:/cache", f"{tmp_path / 'out'}:/work/out", f"{ROOT / 'build'}:/work/build"]
    envs = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "--env")
    assert envs["TOOLKIT_COMPILE_CACHE"] == "redis://c:6379"
    assert envs["TOOLKIT_CACHE_DIR"] == "/cache" and envs["CCACHE_DIR"] == "/cache/ccache"
    assert envs["TOOLKIT_OUT_DIR"] == "/work/out" and envs["EXTRA"] == "1"
    assert envs["TOOLKIT_BUILD_DIR"] == "/work/build"
    assert "UNRELATED" not in envs
    assert argv[-9:] == ["img:1", "nox", "--noxfile", "/work/project/noxfile.py", "-s", "release", "--",
                         "--only", "cp311-cdna"]


def test_missing_image_is_a_clear_error():
    proc = subprocess.run([sys.executable, "-m", "toolkit", "container", "--dry-run", "release"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "no image to run in" in proc.stderr



@pytest.mark.parametrize("session", ["lock", "patch", "bump", "compile-check"])
def test_any_sessions_recipe_picks_its_image(tmp_path, session):
    """A session that is neither `release` nor `build` (nox's lock, patch, bump; a toolkit command under
    --runner toolkit) still takes the image of the recipe its own --recipe names, spelled either way."""
    path = _fake_engines(tmp_path, ["docker"])
    recipe = tmp_path / "boxed.toml"
    recipe.write_text(RECIPE + '\n[release.container]\nimage = "boxed-image:7"\n')
    env = {**os.environ, "PATH": path + os.pathsep + os.environ["PATH"]}
    env.pop(container.ENV_ENGINE, None)
    for spelling in (["--recipe", str(recipe)], [f"--recipe={recipe}"]):
        proc = subprocess.run([sys.executable, "-m", "toolkit", "container", "--engine", "docker", "--dry-run",
                               session, "--", *spelling], cwd=ROOT, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert "boxed-image:7" in shlex.split(proc.stdout)


def test_the_engine_runs_with_this_process_environment_plus_what_the_session_adds(tmp_path):
    """The engine's own command keeps PATH and the rest of the caller's environment (podman finds its runtime
    through PATH), with SOURCE_DATE_EPOCH added where the caller set none."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "seen.json"
    engine = bin_dir / "docker"
    engine.write_text(f"#!{sys.executable}\nimport json, os\njson.dump(dict(os.environ), open({str(seen)!r}, 'w'))\n")
    engine.chmod(0o755)
    env = {**os.environ, "PATH": str(bin_dir) + os.pathsep + os.environ["PATH"], "CALLERS_OWN": "kept"}
    env.pop(container.ENV_ENGINE, None)
    env.pop("SOURCE_DATE_EPOCH", None)
    proc = subprocess.run([sys.executable, "-m", "toolkit", "container", "--engine", "docker", "--image", "img:1",
                           "--build-dir", str(tmp_path / "build"), "lock"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(seen.read_text())
    assert str(bin_dir) in got["PATH"].split(os.pathsep) and got["CALLERS_OWN"] == "kept"
    assert got["SOURCE_DATE_EPOCH"].isdigit()

# -- the real thing: podman, an image from a local rootfs, a toolkit session inside ---------------------

# What `python -m toolkit` imports to read its command line (the engine's ELF reader, the download cache,
# wheel tags), with what requests pulls in: pure Python, copied from the interpreter running the tests.
_IMPORTED = ("elftools", "packaging", "platformdirs", "requests", "urllib3", "idna", "charset_normalizer",
             "certifi")


def _add_toolkit_dependencies(tree: Path) -> None:
    """The toolkit's imported packages into the tree's Debian dist-packages (the image holds no toolkit: the
    project is mounted, its dependencies are not)."""
    dest = tree / "usr/lib/python3/dist-packages"
    dest.mkdir(parents=True, exist_ok=True)
    for name in _IMPORTED:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations, f"{name} is not installed beside the tests"
        shutil.copytree(spec.submodule_search_locations[0], dest / name,
                        ignore=shutil.ignore_patterns("__pycache__"))


@pytest.fixture(scope="module")
def podman_image(tmp_path_factory):
    _need("podman")
    _need("runc")
    base = tmp_path_factory.mktemp("podman")
    env = {**os.environ, **container.sandbox_config(base / "engine")}
    context = base / "context"
    local_rootfs.from_host_python(context / "rootfs")
    _add_toolkit_dependencies(context / "rootfs")
    tag = "localhost/toolkit-release-test:1"
    engine = container.detect_engine("podman")
    argv = container.build_argv(engine, ROOT / "containers/local-rootfs.Containerfile", context, tag)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tag, env, base


def _container_cli(image_env, *args) -> subprocess.CompletedProcess:
    tag, env, base = image_env
    return subprocess.run(
        [sys.executable, "-m", "toolkit", "container", "--engine", "podman", "--image", tag,
         "--runner", "toolkit", "--source", str(base / "src"), "--cache", str(base / "cache"),
         "--out", str(base / "out"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_toolkit_session_runs_inside_podman_image(podman_image):
    base = podman_image[2]
    (base / "src").mkdir(exist_ok=True)
    (base / "src/boxed.toml").write_text(RECIPE)
    inside = _container_cli(podman_image, "release", "--", "--recipe", "/work/source/boxed.toml",
                            "--print-matrix")
    assert inside.returncode == 0, inside.stderr
    host = subprocess.run([sys.executable, "-m", "toolkit", "release", "--recipe", str(base / "src/boxed.toml"),
                           "--print-matrix"], cwd=ROOT, capture_output=True, text=True, check=True)
    # the image holds no toolkit: this ran the project's mounted copy, reading the mounted source folder
    assert json.loads(inside.stdout) == json.loads(host.stdout)
    assert len(json.loads(inside.stdout)["include"]) == 6
    assert (base / "cache").is_dir() and (base / "out").is_dir()


def test_session_failure_inside_is_the_exit_code_outside(podman_image):
    base = podman_image[2]
    (base / "src").mkdir(exist_ok=True)
    (base / "src/bad.toml").write_text('[recipe]\nname = "bad"\n[release]\npython = ["3.x"]\n')
    inside = _container_cli(podman_image, "release", "--", "--recipe", "/work/source/bad.toml", "--print-matrix")
    assert inside.returncode == 2
    # The error inside names the recipe by its host path, the one the user can open.
    said = "bad.toml: key 'release.python[0]': expected a CPython version"
    assert f"{(base / 'src').resolve()}/{said}" in inside.stderr, inside.stderr
    assert f"/work/source/{said}" not in inside.stderr
