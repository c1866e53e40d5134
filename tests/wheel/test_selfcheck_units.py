"""The self-check's own readers (toolkit/wheel/templates/selfcheck.py, shipped as _selfcheck.py), loaded from the
template: glibc's loader cache read in pure Python against `ldconfig -p`, and PEP 440 ranges of release numbers
against `packaging`."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.support.selfcheck_support import load_template
from tests.support.tools import require_tool


@pytest.fixture(scope="module")
def selfcheck():
    return load_template("selfcheck")


def test_loader_cache_matches_ldconfig(selfcheck):
    ldconfig = shutil.which("ldconfig") or ("/sbin/ldconfig" if Path("/sbin/ldconfig").exists() else None)
    require_tool(ldconfig is not None, "ldconfig is needed to compare the loader cache reader with")
    listed: dict[str, set[str]] = {}
    for line in subprocess.run([ldconfig, "-p"], capture_output=True, text=True, check=True).stdout.splitlines():
        match = re.match(r"\s+(\S+) \(.*\) => (\S+)$", line)
        if match:
            listed.setdefault(match.group(1), set()).add(match.group(2))
    read = selfcheck.ld_cache()
    assert listed and {name: set(paths) for name, paths in read.items()} == listed
    assert "libc.so.6" in read
    assert selfcheck.ld_cache("/nonexistent/ld.so.cache") == {}


def test_search_follows_ld_library_path_then_the_cache(selfcheck, tmp_path, monkeypatch):
    (tmp_path / "libc.so.6").write_bytes(b"\x7fELF")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/nonexistent:{tmp_path}")
    assert selfcheck.search("libc.so.6", [], selfcheck.ld_cache()) == (str(tmp_path / "libc.so.6"), "LD_LIBRARY_PATH")
    monkeypatch.delenv("LD_LIBRARY_PATH")
    path, how = selfcheck.search("libc.so.6", [], selfcheck.ld_cache())
    assert how == "ld.so.cache" and Path(path).is_file()
    assert selfcheck.search("libnot-a-library.so.9", [], {}) == (None, "not found")
    loads, where, error = selfcheck.try_load("libc.so.6")
    assert loads and error is None and Path(where).resolve() == Path(path).resolve()
    assert selfcheck.try_load("libnot-a-library.so.9")[2].startswith("libnot-a-library.so.9: cannot open")


@pytest.mark.parametrize("spec", [">=1.24", ">=1.24,<1.32", "~=1.24.0", "==1.27.*", "!=1.30.0", ">1.24.1", "<=1.25"])
@pytest.mark.parametrize("version", ["1.22.0", "1.24.1", "1.24.4", "1.25", "1.27.1", "1.30.0", "1.32.0"])
def test_ranges_agree_with_packaging(selfcheck, spec, version):
    assert selfcheck.in_range(version, spec) == (version in SpecifierSet(spec))
