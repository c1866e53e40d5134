"""A set-up block that installs nox with pipx also puts it on PATH: pipx installs into ~/.local/bin, which a fresh
account's PATH lacks until `pipx ensurepath` and a new shell, so the next line, `nox -s ...`, would not be found."""

from __future__ import annotations

import re

from tests.support.doc_commands import documentation_pages
from tests.support.tools import ROOT


def test_pipx_install_nox_is_followed_by_ensurepath_and_a_new_shell():
    blocks = [(page, block) for page in documentation_pages()
              for block in re.findall(r"```sh\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
              if re.search(r"^\s*pipx install nox\b", block, flags=re.M)]
    assert {page.relative_to(ROOT).as_posix() for page, _ in blocks} >= {"README.md", "docs/getting-started.md"}
    for page, block in blocks:
        lines = [line.strip() for line in block.splitlines()]
        after = lines[next(i for i, line in enumerate(lines) if line.startswith("pipx install nox")) + 1:]
        assert after and after[0].startswith("pipx ensurepath") and "new shell" in after[0], \
            f"{page.relative_to(ROOT)}: `pipx install nox` without `pipx ensurepath` and a new shell after it"
