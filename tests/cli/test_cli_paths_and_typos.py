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


def test_an_abbreviated_option_is_refused_and_named_in_full(tmp_path):
    """A prefix of an option is no option: `build --gpu` would have built for targets nobody named in full, and
    `clean --ca` removed the downloads. Each is refused before anything runs, naming the option it begins."""
    build = tmp_path / "b"
    for argv, meant in ((["build", "--gpu-target", "gfx90a"], "--gpu-targets"),
                        (["build", "--gpu", "gfx90a"], "--gpu-targets"),
                        (["clean", "--ca"], "--cache")):
        proc = toolkit(*argv, "--dry-run", "--build-dir", str(build))
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        command, option = argv[0], argv[1]
        assert proc.stderr.splitlines()[0] == (
            f"python -m toolkit {command}: error: unrecognized arguments: {option} (did you mean {meant}?)"
            + (" gfx90a" if command == "build" else "")), proc.stderr
        assert "would remove" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    assert not build.exists()


def test_no_parser_of_the_command_line_takes_an_abbreviation():
    """Every command parser, nested ones too, and every standalone script's parser in toolkit/."""
    import ast

    from toolkit.cli.main import _subparsers, build_parser

    top = build_parser()
    parsers = [top, *_subparsers(top)]
    assert len(parsers) > 20 and all(p.allow_abbrev is False for p in parsers), \
        [p.prog for p in parsers if p.allow_abbrev]
    loose = []
    for path in sorted((ROOT / "toolkit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == \
                    "ArgumentParser" and not any(k.arg == "allow_abbrev" for k in node.keywords):
                loose.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not loose, "an ArgumentParser that takes abbreviations: " + ", ".join(loose)
