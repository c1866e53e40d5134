"""Container sessions: an image name or an `-e` value that the engine would read as an option is refused, in one
line naming --image, [release.container] image or --env, before the engine runs and before any mount folder is
made. The engine is the real podman on PATH, which the refusal never reaches."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.injection import processes_started, toolkit_here
from tests.support.tools import need
from toolkit.container import engine as container
from toolkit.recipe.release import ReleaseSettings
from toolkit.util.errors import ToolkitError
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml


def _container(tmp_path: Path, *options: str):
    need("podman", "podman runc")
    return toolkit_here(tmp_path, "container", "--engine", "podman", "--cache", str(tmp_path / "cache"),
                        "--out", str(tmp_path / "out"), *options, "release")


@pytest.mark.parametrize("image", ["-x", "--privileged", "--volume=/:/host"])
def test_option_looking_image_is_refused(tmp_path, image):
    out = _container(tmp_path, f"--image={image}")
    out.assert_refused("container image (--image or [release.container] image): ", f"{image!r} starts with '-'",
                       "expected [registry[:port]/]name[:tag]")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["-v=/:/host", "--privileged=1", "1A=x"])
def test_env_value_starting_with_an_option_is_refused(tmp_path, value):
    out = _container(tmp_path, "--image=localhost/img:1", f"--env={value}")
    out.assert_refused(f"--env: {value!r} does not start with a variable name", "expected NAME=VALUE")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def test_engine_arguments_are_checked_where_they_are_spelled(tmp_path):
    """Whoever calls the container module (not only the command line) meets the same checks."""
    engine = container.Engine("podman", "/usr/bin/podman")
    mounts = container.Mounts(project=tmp_path, cache=tmp_path / "cache", out=tmp_path / "out")
    with processes_started() as started:
        with pytest.raises(ToolkitError, match=r"^container image .*'-x' starts with '-'"):
            container.run_session(engine, "-x", "release", [], mounts)
        with pytest.raises(ToolkitError, match=r"^--env -e: '-e=1' does not start with a variable name"):
            container.run_session(engine, "img:1", "release", [], mounts, {"-e": "1"})
        with pytest.raises(ToolkitError, match=r"^container image .*'--rm' starts with '-'"):
            container.build_argv(engine, tmp_path / "Containerfile", tmp_path, "--rm")
        with pytest.raises(ToolkitError, match=r"^--build-arg -x: "):
            container.build_argv(engine, tmp_path / "Containerfile", tmp_path, "img:1", {"-x": "1"})
    assert not started
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()
    argv = container.run_argv(engine, "img:1", ["true"], mounts, {"A": "-x"})
    assert argv[argv.index("--") + 1:] == ["img:1", "true"]  # the image after `--`: never an option


def test_recipe_image_is_checked_where_it_is_read(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text('[release]\npython = ["3.12"]\n\n[[release.target_set]]\ntargets = ["gfx90a"]\n\n'
                      '[release.container]\nimage = "--privileged"\n')
    with pytest.raises(ToolkitError) as err:
        read(ReleaseSettings, load_toml(recipe).table("release"))
    assert str(err.value).startswith(f"{recipe}: key 'release.container.image': '--privileged' starts with '-'")
