"""The ROCm axis: one entry per [[release.rocm]], each built in its own build root's image, never the wrong one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.release_image import toolkit_cli
from tests.support.release_wheels import release_settings
from toolkit.release import in_root
from toolkit.release.matrix import plan_matrix
from toolkit.util.errors import RecipeError, ToolkitError

ROCM = """\
[release]
axes = ["rocm", "toolchain", "features"]
features = [["hipdnn"]]

[[release.rocm]]
name = "rocm6"
root = "debian-sid-rocm"

[[release.rocm]]
name = "rocm7"
root = "debian-sid-rocm7"

[[release.toolchain]]
name = "glibc2.28"
toolchain = "zig"
glibc_floor = "2.28"
"""


def test_rocm_axis_names_the_entries_and_keeps_the_wheel_label(tmp_path):
    entries = plan_matrix(release_settings(tmp_path, ROCM))
    assert [e.id for e in entries] == ["rocm6-glibc2.28-hipdnn", "rocm7-glibc2.28-hipdnn"]
    assert [(e.rocm.name, e.rocm.root) for e in entries] == [("rocm6", "debian-sid-rocm"),
                                                              ("rocm7", "debian-sid-rocm7")]
    # The distribution's name carries the variant; the local version stays what the other axes say.
    assert {e.label for e in entries} == {"glibc2.28.hipdnn"}
    assert entries[1].to_json()["root"] == "debian-sid-rocm7"


@pytest.mark.parametrize("body, key, message", [
    ('axes = ["rocm", "features"]', "release.rocm", "needs at least one [[release.rocm]]"),
    ('axes = ["features"]\n[[release.rocm]]\nname = "rocm7"\nroot = "debian-sid-rocm7"', "release.rocm",
     "not one of the matrix's axes"),
    ('axes = ["rocm", "features"]\n[[release.rocm]]\nname = "rocm7"\nroot = "no-such-root"', "release.rocm[0].root",
     "unknown build root 'no-such-root'"),
    ('axes = ["rocm", "features"]\n[[release.rocm]]\nname = "ROCm 7"\nroot = "debian-sid-rocm7"',
     "release.rocm[0].name", "expected a variant name"),
    ('axes = ["rocm", "features"]\n[[release.rocm]]\nname = "rocm7"\nroot = "debian-sid-rocm7"\n'
     '[[release.rocm]]\nname = "rocm7"\nroot = "debian-sid-rocm"', "release.rocm", "duplicate ROCm variant"),
])
def test_bad_rocm_axis_names_the_key(tmp_path, body, key, message):
    with pytest.raises(RecipeError, match=re.escape(f"key '{key}'") + ".*" + re.escape(message)):
        release_settings(tmp_path, "[release]\n" + body + "\n")


def test_an_entry_is_built_only_in_its_own_root(tmp_path, monkeypatch):
    rocm6, rocm7 = plan_matrix(release_settings(tmp_path, ROCM))
    monkeypatch.delenv("TOOLKIT_IN_ROOT", raising=False)
    monkeypatch.delenv("TOOLKIT_IN_IMAGE", raising=False)
    assert (in_root.root_for(rocm6), in_root.root_for(rocm7)) == ("debian-sid-rocm", "debian-sid-rocm7")
    monkeypatch.setenv("TOOLKIT_IN_IMAGE", "debian-sid-rocm7")
    assert in_root.root_for(rocm7) is None   # built here
    with pytest.raises(ToolkitError, match="rocm6-glibc2.28-hipdnn is built in build root debian-sid-rocm, and "
                                           "this is debian-sid-rocm7"):
        in_root.root_for(rocm6)


def test_a_wheel_of_another_rocm_is_refused(tmp_path):
    _, rocm7 = plan_matrix(release_settings(tmp_path, ROCM))
    variants = {"rocm6": "libamdhip64.so.6", "rocm7": "libamdhip64.so.7"}
    in_root.check_rocm_variant(rocm7, Path("onnxruntime_ep_amdgpu_rocm7-0.1.0+glibc2.28-py3-none-any.whl"), variants)
    # A --with-hipdnn build is a distribution of its own, the variant before the feature ([wheel] named_features).
    hipdnn = Path("onnxruntime_ep_amdgpu_rocm7_hipdnn-0.1.0+glibc2.28.hipdnn-py3-none-any.whl")
    in_root.check_rocm_variant(rocm7, hipdnn, variants)
    with pytest.raises(ToolkitError, match="rocm7-glibc2.28-hipdnn .* built onnxruntime_ep_amdgpu_rocm6-0.1.0"):
        in_root.check_rocm_variant(rocm7, Path("onnxruntime_ep_amdgpu_rocm6-0.1.0+glibc2.28-py3-none-any.whl"),
                                   variants)


def test_dry_run_says_where_each_entry_is_built():
    proc = toolkit_cli("release", "--recipe", "umbrella-ep-real", "--dry-run", env={"TOOLKIT_IN_IMAGE": ""})
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("entry ")]
    assert lines[0] == ("entry rocm6-glibc2.28: toolchain glibc2.28, features none, ROCm rocm6 (root debian-sid-rocm),"
                        " in a container of build root debian-sid-rocm")
    assert lines[3].startswith("entry rocm7-glibc2.28-hipdnn: toolchain glibc2.28, features hipdnn, ROCm rocm7")
    assert "the meta-package onnxruntime-ep-amdgpu" in proc.stdout


def test_container_of_a_release_spanning_two_roots_is_one_error_line():
    proc = toolkit_cli("container", "--engine", "podman", "--dry-run", "--recipe", "umbrella-ep-real", "release")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    roots = "built in 3 build roots (debian-sid-rocm, debian-sid-rocm7, debian-sid-windows)"
    assert len(errors) == 1 and roots in errors[0]
    assert "Traceback" not in proc.stderr
