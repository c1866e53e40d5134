"""Reading the exports a link declares: every spelling of --version-script a link line carries, and the
global names of a GNU ld version script (labelled nodes, unlabelled ones, comments, local wildcards)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.upstream.exports import ExportChange, compare, global_symbols, version_script


@pytest.mark.parametrize("flags", [
    "-shared -Xlinker --version-script=/t/v.lds -Xlinker --gc-sections",
    '-shared -Wl,--version-script,"/t/v.lds"',
    "-Wl,--gc-sections,--version-script=/t/v.lds",
    "-Xlinker --version-script -Xlinker /t/v.lds",
])
def test_every_spelling_names_the_script(flags):
    assert version_script(flags) == Path("/t/v.lds")


def test_no_script_is_none():
    assert version_script("-shared -Wl,--gc-sections") is None


def test_global_names_of_every_node_without_comments_or_locals():
    script = """# _init and _fini stay local
VERS_1.0 {
  global:
    CreateEpFactories;   /* the factory */
    ReleaseEpFactory;
  local:
    *;
};
VERS_2.0 { global: GetBackendTelemetry; } VERS_1.0;
{ Unlabelled; };
"""
    assert global_symbols(script) == ["CreateEpFactories", "GetBackendTelemetry", "ReleaseEpFactory", "Unlabelled"]


def test_compare_reports_only_declared_differences():
    expected = {"ep": ["A", "B"], "plain": ["X"], "free": []}
    found = {"ep": ["A", "C"], "plain": None, "free": ["Z"]}
    assert compare(expected, found) == [ExportChange("ep", added=["C"], removed=["B"])]
