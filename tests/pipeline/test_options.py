"""The build options are declared once (toolkit/pipeline/options.py): every declared option survives the round trip
argv -> options -> argv, the release passes on exactly what it was given, and parsing writes no environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolkit.cli.main import build_parser, expand_feature_flags
from toolkit.pipeline.options import (
    DECLARED,
    RELEASE_PASSED,
    BuildOptions,
    build_argv,
    option_argv,
    options_from_args,
    release_overrides,
)

# A value of every declared option, none of them its default; repeated options hold two values.
A_VALUE: dict[str, object] = {
    "recipe": "umbrella-ep-real", "variant": "release-x", "with_features": ("hipdnn", "extra"),
    "without_features": ("dml",), "jobs": 3, "dry_run": True, "force": True, "no_wait": True,
    "source": "git+file:///r@abc", "build_folder": Path("/tmp/b"), "gpu_targets": ("gfx90a", "gfx942"),
    "offline": True, "mirrors": ("file:///m", "http://127.0.0.1:1/m"), "insecure_mirror": True, "require_pinned": True,
    "ort_home": Path("/opt/ort"), "rocm_path": Path("/opt/rocm"), "migraphx_home": Path("/opt/migraphx"),
    "local_version": "gfx90a.hipdnn", "toolchain": "zig", "glibc_floor": "2.28", "hipify_engine": "hipify-perl",
}


def _parse(argv: list[str]) -> BuildOptions:
    """`python -m toolkit build ...` as the command line reads it."""
    assert argv[:4] == ["python", "-m", "toolkit", "build"]
    return options_from_args(build_parser().parse_args(expand_feature_flags(argv[3:])))


def test_a_value_is_given_for_every_declared_option():
    assert set(A_VALUE) == set(DECLARED)
    defaults = BuildOptions()
    assert [name for name, value in A_VALUE.items() if getattr(defaults, name) == value] == []


def test_every_option_survives_argv_to_options_to_argv():
    options = BuildOptions(**A_VALUE)
    argv = build_argv(options)
    assert _parse(argv) == options
    assert build_argv(_parse(argv)) == argv
    for flag in ("--jobs", "--insecure-mirror", "--with-hipdnn", "--with-extra", "--without-dml"):
        assert flag in argv
    assert [argv[i + 1] for i, arg in enumerate(argv) if arg == "--mirror"] == list(A_VALUE["mirrors"])


@pytest.mark.parametrize("name", sorted(A_VALUE))
def test_each_option_alone_survives_the_round_trip(name):
    options = BuildOptions(**{name: A_VALUE[name]})
    argv = build_argv(options, "--wheel")
    assert argv[-1] == "--wheel"
    assert _parse(argv[:-1]) == options


def test_the_defaults_are_spelled_as_the_recipe_and_variant_alone():
    assert build_argv(BuildOptions()) == ["python", "-m", "toolkit", "build", "--recipe", "amdgpu-ep",
                                          "--variant", "release"]
    assert _parse(build_argv(BuildOptions())) == BuildOptions()


def test_the_release_passes_on_what_it_was_given():
    given = {name: A_VALUE[name] for name in RELEASE_PASSED}
    assert set(given) == {"jobs", "source", "build_folder", "offline", "mirrors", "insecure_mirror"}
    argv = option_argv(BuildOptions(**given), RELEASE_PASSED)
    args = build_parser().parse_args(["release", "--recipe", "amdgpu-ep", *argv])
    parsed = options_from_args(args, RELEASE_PASSED)
    assert release_overrides(parsed) == given
    # Nothing given: nothing passed on (the entry keeps its own options).
    assert release_overrides(options_from_args(build_parser().parse_args(["release"]), RELEASE_PASSED)) == {}


def test_parsing_insecure_mirror_writes_no_environment(monkeypatch):
    monkeypatch.delenv("TOOLKIT_INSECURE_MIRROR", raising=False)
    for argv in (["build", "--insecure-mirror"], ["release", "--insecure-mirror"], ["lock", "--insecure-mirror"],
                 ["bump", "--recipe", "r", "--to", "main", "--insecure-mirror"]):
        args = build_parser().parse_args(argv)
        assert args.insecure_mirror is True
        assert "TOOLKIT_INSECURE_MIRROR" not in os.environ
