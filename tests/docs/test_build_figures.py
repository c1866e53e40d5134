"""building-hip-ep.md quotes the benchmark that measures a hip-ep build, by its command, and no figure of its own: a
step count or a duration copied into the guide is one machine's and one commit's, and went stale (469 steps quoted,
527 run). Each quoted command must be one the benchmark accepts."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.support.doc_commands import readme_commands, shell_words
from tests.support.tools import ROOT

GUIDE = ROOT / "docs" / "guides" / "building-hip-ep.md"
BENCHMARK = "benchmarks/hip_ep_build.py"
# "469 ninja steps", "527 steps", "about 20 minutes", "46 s", "4 min", "1.5 hours"
FIGURE = re.compile(r"\b\d[\d,.]*\s*(?:ninja\s+)?(?:steps?|minutes?|mins?|s|seconds?|hours?|h)\b")


def prose(text: str) -> str:
    """The page without its fenced blocks (the commands)."""
    return re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.MULTILINE | re.DOTALL)


def figures(text: str) -> list[str]:
    return [m.group(0) for m in FIGURE.finditer(prose(text))]


def test_the_guide_quotes_no_build_figure_of_its_own():
    assert figures(GUIDE.read_text(encoding="utf-8")) == []
    # The check itself: the figures the guide used to quote are caught, a command in a block is not.
    assert figures("A cold build is 469 ninja steps: about 20 minutes; 46 s warm, 4 min real.") == \
        ["469 ninja steps", "20 minutes", "46 s", "4 min"]
    assert figures("```sh\nsleep 5 s\n```\n") == []


def test_the_guide_quotes_the_benchmark_by_commands_it_accepts():
    quoted = [shell_words(s.text) for s in readme_commands(GUIDE) if s.typed and BENCHMARK in s.text]
    assert quoted, f"{GUIDE.name} quotes no `{BENCHMARK}` command"
    usage = subprocess.run([sys.executable, BENCHMARK, "--help"], cwd=ROOT, capture_output=True, text=True)
    assert usage.returncode == 0, usage.stderr
    accepted = set(re.findall(r"(--[a-z][a-z-]*)", usage.stdout))
    for words in quoted:
        assert words[0] == ".nox/toolkit/bin/python" and words[1] == BENCHMARK, words
        assert {w for w in words[2:] if w.startswith("--")} <= accepted, (words, sorted(accepted))
