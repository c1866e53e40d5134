"""The sample's stage line, as a dry run prints it, is quoted by README and the getting-started page and asserted by a
test: the quotes match the real line, and the layout guide's steps for a new stage name every file that quotes it."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.support.tools import ROOT, run_toolkit

QUOTING_DOCS = ("README.md", "docs/getting-started.md")


@pytest.fixture(scope="module")
def sample_stages(tmp_path_factory) -> list[str]:
    proc = run_toolkit("build", "--dry-run", "--build-dir", str(tmp_path_factory.mktemp("build")))
    return re.search(r"stages: (.*)", proc.stderr).group(1).split(" -> ")


def _files_holding(text: str) -> set[str]:
    found = subprocess.run(["git", "grep", "-l", "-F", text, "--", ".", ":!docs/reference"], cwd=ROOT,
                           capture_output=True, text=True)
    return set(found.stdout.split())


@pytest.mark.parametrize("doc", QUOTING_DOCS)
def test_the_quoted_stage_line_is_the_dry_runs(doc, sample_stages):
    quoted = re.findall(r"`stages: ([^`]*)`", (ROOT / doc).read_text())
    assert quoted, f"{doc} no longer quotes the sample's stage line: drop it from QUOTING_DOCS"
    assert set(quoted) == {" -> ".join(sample_stages)}, f"{doc} quotes a stage line the dry run does not print"


def test_the_new_stage_steps_name_every_file_quoting_the_stage_list(sample_stages):
    arrows = " -> ".join(sample_stages)
    listed = ", ".join(f'"{name}"' for name in sample_stages)
    quoting = _files_holding(arrows) | _files_holding(listed)
    assert set(QUOTING_DOCS) <= quoting and "tests/pipeline/test_pipeline.py" in quoting
    layout = (ROOT / "docs" / "explanation" / "layout.md").read_text()
    step = re.search(r"^- \*\*A new stage\*\*:(.*?)(?=^- \*\*|\Z)", layout, flags=re.M | re.S).group(1)
    missing = [f for f in sorted(quoting) if f"`{f}`" not in step]
    assert not missing, f"layout.md's steps for a new stage do not name {missing}, which quote the stage list"
