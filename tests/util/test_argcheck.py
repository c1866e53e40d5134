"""toolkit.util.argcheck: the checks every value passes before it reaches a tool, and `run_git`, which keeps
what it is handed out of git's options and lets git run only the accepted protocols."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.injection import processes_started, repo_with
from tests.support.tools import need
from toolkit.util import argcheck
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run_git

REFS = ["main", "release/1.2", "v1.0", "feature/x-y_z", "a.b", "-x", "--upload-pack=x", "a..b", "a b", "a~1",
        "a^", "a:b", "a?", "a*", "a[", "a\\b", "/a", "a/", "a//b", "a.", ".a", "a/.b", "a.lock", "a/b.lock/c",
        "@", "a@{1}", "a@b", "a\tb", "a\x7fb", "", "x/-y", "tags/v2", "HEAD", "ma\u00efn"]


def test_ref_rules_agree_with_git_check_ref_format():
    need("git")
    for name in REFS:
        if name.startswith("-") or not name:
            assert argcheck.ref_problem(name) is not None  # git would read it as an option; refused outright
            continue
        ok = subprocess.run(["git", "check-ref-format", "--allow-onelevel", name], capture_output=True).returncode == 0
        assert (argcheck.ref_problem(name) is None) == ok, name


@pytest.mark.parametrize("url", ["https://github.com/o/r.git", "ssh://git@host/o/r", "git://host/r", "file:///srv/r",
                                 "git@github.com:o/r.git", "host:r", "/srv/repos/r.git", "relative/r", "HTTPS://h/r"])
def test_accepted_git_urls(url):
    assert argcheck.git_url(url, "x") == url


@pytest.mark.parametrize(("url", "problem"), [
    ("--upload-pack=touch CANARY", "starts with '-'"),
    ("-oProxyCommand=x", "starts with '-'"),
    ("ext::sh -c touch% CANARY", "remote-helper transport ext::"),
    ("fd::17", "remote-helper transport fd::"),
    ("http://host/r", "scheme http://"),
    ("ftp://host/r", "scheme ftp://"),
    ("ssh://-oProxyCommand=x/r", "host starting with '-'"),
    ("ssh://user@-oProxyCommand=x/r", "host starting with '-'"),
    ("-user@host:r", "starts with '-'"),
    ("user@-host:r", "part starting with '-'"),
    ("host:-r", "part starting with '-'"),
    ("https://h/r\n", "control character"),
    ("", "is empty"),
])
def test_refused_git_urls_name_where_and_what_is_allowed(url, problem):
    with pytest.raises(ToolkitError) as err:
        argcheck.git_url(url, "recipes/x.toml: key 'source.git'")
    line = str(err.value)
    assert "\n" not in line.strip() or url.endswith("\n")
    assert line.startswith("recipes/x.toml: key 'source.git': ") and problem in line
    assert "expected a git URL (https://, ssh://, git://, file://, user@host:path or a local path)" in line


@pytest.mark.parametrize("rev", ["main", "v1.0", "main~1", "HEAD^2~3", "abc1234", "a" * 40, "release/1.2"])
def test_revisions_a_person_names(rev):
    assert argcheck.git_revision(rev, "--to") == rev


@pytest.mark.parametrize("rev", ["-x", "--upload-pack=touch C", "a..b", "a b", "main@{1}", "x.lock", "~1", ""])
def test_refused_revisions(rev):
    with pytest.raises(ToolkitError, match=r"^--to: .*expected a commit id, a branch or a tag"):
        argcheck.git_revision(rev, "--to")


def test_cmake_define_values():
    assert argcheck.cmake_define("A", "x y", "-DA") == "x y"
    assert argcheck.cmake_define("A", "a;b", "-DA", is_list=True) == "a;b"
    with pytest.raises(ToolkitError, match=r"^-DA: 'a;b' holds ';'"):
        argcheck.cmake_define("A", "a;b", "-DA")
    with pytest.raises(ToolkitError, match=r"^-DA: 'a\\nb' holds a newline"):
        argcheck.cmake_define("A", "a\nb", "-DA", is_list=True)
    with pytest.raises(ToolkitError, match="is not a CMake variable name"):
        argcheck.cmake_define("-A", "x", "-D-A")


def test_container_values():
    for image in ("img:1", "localhost/ort-amdgpu-root-sid:d7e642eb-ceeee299", "ghcr.io:443/o/r@sha256:" + "a" * 64):
        assert argcheck.image_name(image, "--image") == image
    for image in ("-x", "--privileged", "img:1 --rm", "Img", ""):
        with pytest.raises(ToolkitError, match=r"^--image: "):
            argcheck.image_name(image, "--image")
    assert argcheck.env_assignment("A_1", "-x", "--env") == "A_1=-x"  # a value is glued to its name
    for name, value in (("-v", "/:/host"), ("1A", "x"), ("A", "x\ny")):
        with pytest.raises(ToolkitError, match=r"^--env: "):
            argcheck.env_assignment(name, value, "--env")


def test_run_git_refuses_an_option_looking_operand_before_git_starts(tmp_path):
    with processes_started() as started, pytest.raises(ToolkitError, match="starts with '-'"):
        run_git(["ls-remote"], [f"--upload-pack=touch {tmp_path / 'CANARY'}"], "test")
    assert not started and not (tmp_path / "CANARY").exists()


def test_run_git_lets_git_run_no_ext_transport_even_unchecked(tmp_path):
    """Were a value to get past argcheck, git itself refuses the ext:: transport: protocol.allow=never."""
    need("git")
    canary = tmp_path / "CANARY"
    proc = run_git(["ls-remote"], [f"ext::sh -c touch% {canary}"], "test", check=False)
    assert proc.returncode != 0 and "transport 'ext' not allowed" in proc.stderr
    assert not canary.exists()


def test_run_git_submodules_only_run_accepted_protocols(tmp_path):
    """A submodule's ext:: URL is refused by git too when the toolkit's check is bypassed: the protocol settings
    reach the git commands `git submodule` starts."""
    need("git")
    canary = tmp_path / "CANARY"
    inner = repo_with(tmp_path / "inner", {"a": "1"})
    repo_with(tmp_path / "outer", {".gitmodules": f'[submodule "s"]\n\tpath = s\n\turl = ext::sh -c touch% {canary}\n'},
              {"s": inner})
    proc = run_git(["submodule", "update", "--init"], [], "test", cwd=tmp_path / "outer", file_protocol=True,
                   check=False)
    assert proc.returncode != 0 and "transport 'ext' not allowed" in proc.stderr
    assert not canary.exists()
