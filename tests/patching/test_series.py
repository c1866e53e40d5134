"""The series file format: every mistake is an error naming the series file and line."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from toolkit.patching import SeriesError, load_series
from toolkit.patching.series import rewrite_series
from toolkit.util.errors import ToolkitError


def _setup(tmp_path: Path, text: str) -> Path:
    (tmp_path / "0001-a.patch").write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    (tmp_path / "0002-b.patch").write_text("--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n")
    series = tmp_path / "series"
    series.write_text(text)
    return series


SHA = "0" * 64


def test_valid_series_reads_every_field(tmp_path):
    series = _setup(tmp_path, f"# File header, not a reason.\n\n# Why one.\n# More of why.\n"
                              f"0001-a.patch phase=base sha256={SHA}\n"
                              f"# Only for hipDNN builds.\n0002-b.patch phase=hipified sha256={'a' * 64} "
                              f"when=hipdnn,!dml\n")
    s = load_series(series)
    a, b = s.entries
    assert (a.name, a.phase, a.sha256, a.when, a.why, a.line, a.comment_line) == (
        "0001-a.patch", "base", SHA, (), "Why one.\nMore of why.", 5, 3)
    assert a.path == tmp_path / "0001-a.patch"
    assert (b.phase, b.when, b.why, b.line) == ("hipified", ("hipdnn", "!dml"), "Only for hipDNN builds.", 7)
    assert b.enabled(["hipdnn"]) and not b.enabled([]) and not b.enabled(["hipdnn", "dml"])
    assert s.select("base", []) == ([a], [])
    assert s.select("hipified", []) == ([], [b])
    assert s.select(None, ["hipdnn"]) == ([a, b], [])


@pytest.mark.parametrize("text, message", [
    (f"0001-a.patch phase=base sha256={SHA}\n",
     "series:1: patch '0001-a.patch' has no comment saying why it exists"),
    (f"# Why.\n\n0001-a.patch phase=base sha256={SHA}\n",
     "series:3: patch '0001-a.patch' has no comment saying why it exists"),
    (f"# Why.\n0001-a.patch phase=base sha256={SHA} phaze=base\n",
     "series:2: unknown field 'phaze' (known fields: phase, sha256, when, if-tree-has, unless-tree-has)"),
    (f"# Why.\n0001-a.patch phase=before sha256={SHA}\n",
     "series:2: phase 'before' is not one of base, hipified"),
    ("# Why.\n0001-a.patch phase=base sha256=abc123\n",
     "series:2: sha256 'abc123' is not 64 lowercase hex digits"),
    (f"# Why.\n0001-a.patch phase=base sha256={'G' * 64}\n",
     f"series:2: sha256 '{'G' * 64}' is not 64 lowercase hex digits"),
    ("# Why.\n0001-a.patch phase=base\n",
     "series:2: patch '0001-a.patch' lacks the required field 'sha256'"),
    (f"# Why.\n0001-a.patch phase=base sha256={SHA}\n# Again.\n0001-a.patch phase=base sha256={SHA}\n",
     "series:4: patch '0001-a.patch' is listed twice (first on line 2)"),
    (f"# Why.\n0009-gone.patch phase=base sha256={SHA}\n",
     "series:2: patch file {dir}/0009-gone.patch not found"),
    (f"# Why.\n0001-a.patch phase=base sha256={SHA} sha256={SHA}\n",
     "series:2: field 'sha256' given twice"),
    (f"# Why.\n0001-a.patch phase=base sha256={SHA} when=hip dnn\n",
     "series:2: 'dnn' is not a key=value field (known fields: phase, sha256, when, if-tree-has, unless-tree-has)"),
    (f"# Why.\n0001-a.patch phase=base sha256={SHA} when=hip/dnn\n",
     "series:2: when='hip/dnn' has a bad feature name 'hip/dnn'"),
    (f"# Why.\n../0001-a.patch phase=base sha256={SHA}\n",
     "series:2: patch path '../0001-a.patch' must be relative to the series folder, without '..'"),
])
def test_series_errors_name_file_and_line(tmp_path, text, message):
    series = _setup(tmp_path, text)
    with pytest.raises(SeriesError) as info:
        load_series(series)
    assert isinstance(info.value, ToolkitError)
    assert info.value.message == f"{series.parent}/" + message.format(dir=tmp_path)


def test_missing_series_file(tmp_path):
    with pytest.raises(SeriesError, match=r"series: series file not found"):
        load_series(tmp_path / "series")


def test_rewrite_keeps_comments_and_appends(tmp_path):
    text = (f"# Header.\n\n# Why one.\n0001-a.patch phase=base sha256={SHA}\n\n"
            f"# Why two.\n0002-b.patch phase=hipified sha256={SHA} when=hipdnn\n")
    s = load_series(_setup(tmp_path, text))
    new_sha = hashlib.sha256(b"x").hexdigest()
    out = rewrite_series(s, {"0002-b.patch": new_sha}, {"0001-a.patch"},
                         [("0003-c.patch", "base", SHA, "Added.\nTODO: say why.")])
    assert out == (f"# Header.\n\n\n# Why two.\n0002-b.patch phase=hipified sha256={new_sha} when=hipdnn\n\n"
                   f"# Added.\n# TODO: say why.\n0003-c.patch phase=base sha256={SHA}\n")
