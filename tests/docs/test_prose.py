"""Pages read once through: no sentence said twice on one page (a paragraph pasted into another section), and
every `(see "Heading")` names a heading of that page."""

from __future__ import annotations

import re

from tests.support.doc_commands import documentation_pages
from tests.support.tools import ROOT


def sentences(text: str) -> list[str]:
    """The page's sentences, each paragraph on its own, without code blocks, tables and quoted output."""
    text = re.sub(r"```.*?```", "\n\n", text, flags=re.S)
    # Tables and lines indented as quoted output (a report's lines are alike by design) are not prose.
    kept = "\n".join("" if line.lstrip().startswith("|") or line.startswith("    ") else line
                      for line in text.splitlines())
    return [s for paragraph in re.split(r"\n\s*\n", kept)
            for s in re.split(r"(?<=[.!?])\s+", " ".join(paragraph.split())) if s]


def opening(sentence: str) -> str:
    """A sentence's first four words, code spans and parentheses left out: what a restatement keeps."""
    words = re.findall(r"[a-z0-9_]+", re.sub(r"`[^`]*`|\([^)]*\)", " ", sentence).lower())
    return " ".join(words[:4]) if len(words) >= 10 else ""


def test_no_page_says_a_sentence_twice():
    """Twice: word for word, or restated (`A recipe (`recipes/NAME.toml`) is data only: ...` on top, `A recipe
    (`recipes/*.toml`) is data: ...` again in section 6)."""
    repeated = []
    for page in documentation_pages():
        seen: dict[str, str] = {}
        for sentence in sentences(page.read_text(encoding="utf-8")):
            key = opening(sentence)
            if key and key in seen:
                repeated.append(f"{page.relative_to(ROOT)}: {sentence!r} restates {seen[key]!r}")
            seen[key] = sentence
    assert repeated == []


def test_see_references_name_a_heading_of_their_page():
    dangling = []
    for page in documentation_pages():
        text = page.read_text(encoding="utf-8")
        headings = {re.sub(r"^\d+\.\s*", "", h.strip()) for h in re.findall(r"^#+\s+(.*)$", text, flags=re.M)}
        for name in re.findall(r"\(see \"([^\"]+)\"\)", text):
            if name not in headings:
                dangling.append(f"{page.relative_to(ROOT)}: (see \"{name}\") but the page has no such heading")
    assert dangling == []


def test_a_toolkit_command_in_the_text_names_the_python_that_runs_it():
    """`python -m toolkit docs reference` in prose fails with the system's Python (it lacks the toolkit's
    dependencies); a command the reader is told to run is spelled as README's set-up runs it."""
    bare = [f"{page.relative_to(ROOT)}: {span}" for page in documentation_pages() if "reference" not in page.parts
            for line in page.read_text(encoding="utf-8").splitlines()
            if not line.startswith("| `nox -s ")  # a session's row: what the session runs, in its environment
            for span in re.findall(r"(?<![./\w])`python -m toolkit [^`]*`", line)]
    assert bare == [], "spell them `.nox/toolkit/bin/python -m toolkit ...`"
