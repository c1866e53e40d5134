"""Issue 35, items 12 and 13: a path of the wrong kind and a mistyped option each get one precise error line.

Real files and real `python -m toolkit` processes: the exit code and every line printed are asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.tools import ROOT


def toolkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


def test_hipify_of_a_file_says_it_is_a_file_and_names_the_folder_to_give(tmp_path):
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k() {}\n")
    proc = toolkit("hipify", str(kernel), str(tmp_path / "out"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"error: hipify: source {kernel} is a file, not a folder; hipify converts a source tree",
        f"  hint: give the folder that holds it ({tmp_path}): every C/C++/CUDA file under it is converted"]
    assert not (tmp_path / "out").exists()


def test_hipify_into_a_file_says_out_is_a_file_before_writing_anything(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text("__global__ void k() {}\n")
    out = tmp_path / "out.cu"
    out.write_text("mine\n")
    proc = toolkit("hipify", str(src), str(out))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"error: hipify: output {out} is a file, not a folder; OUT is the folder the converted tree is written to",
        "  hint: give a folder path (it is created when missing)"]
    assert out.read_text() == "mine\n"


def test_a_wheel_given_as_source_is_named_a_wheel(tmp_path):
    wheel = tmp_path / "ep-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    proc = toolkit("build", "--dry-run", "--source", str(wheel), "--build-dir", str(tmp_path / "b"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-2:] == [
        f"error: --source {wheel}: a wheel is a built package, not a source tree to build",
        f"  hint: give the source tree's folder, archive URL or git+URL@COMMIT; to try the wheel, run: "
        f".nox/toolkit/bin/python -m toolkit smoke {wheel}"]
    archive = tmp_path / "src.tar.gz"
    archive.write_bytes(b"")
    proc = toolkit("build", "--dry-run", "--source", str(archive), "--build-dir", str(tmp_path / "b"))
    assert proc.stderr.splitlines()[-2:] == [
        f"error: --source {archive}: an archive file is given by URL, not by path",
        f"  hint: pass --source file://{archive}#sha256=<its sha256>, or unpack it and give the folder"]


def test_a_mistyped_option_is_one_error_line_and_a_pointer_to_help():
    proc = toolkit("hipify", "--stict", "a", "b")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "python -m toolkit hipify: error: unrecognized arguments: --stict (did you mean --strict?)",
        "  hint: `.nox/toolkit/bin/python -m toolkit hipify --help` lists its options"]


def test_a_source_path_outside_the_project_is_refused_as_the_guide_and_key_reference_say(tmp_path_factory):
    """The refusal exists; the recipe guide and the key reference say so, with the way around it."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    recipe = tmp_path_factory.mktemp("project") / "recipes" / "vecops.toml"
    recipe.parent.mkdir()
    recipe.write_text(f'[recipe]\nname = "vecops"\n[source]\npath = "{elsewhere}"\n')
    proc = toolkit("build", "--dry-run", "--recipe", str(recipe), "--build-dir", str(recipe.parent / "b"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0].startswith(
        f"error: {recipe}: key 'source.path': {elsewhere} is outside the project, the recipe's folder")
    guide = (ROOT / "docs/guides/writing-a-recipe.md").read_text()
    assert "refused with `is outside the project`" in guide and "give the tree with `--source PATH`" in guide
    reference = (ROOT / "docs/reference/recipe-keys.md").read_text()
    assert "one elsewhere is refused. Build a tree elsewhere with `--source PATH`." in reference
