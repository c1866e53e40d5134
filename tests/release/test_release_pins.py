"""A release refuses unpinned sources, as the release guide promises: every archive its entries' builds fetch (the
source, the FetchContent dependencies of their features, the ORT package) needs a sha256 or content digest in the
recipe or its lock file. The plan (--dry-run) says so, and the refusal comes before anything is fetched, naming each
archive and the lock command; a build given --require-pinned (each build of a release entry) refuses the same way.
Every command reads the recipe whole (load_recipe), so a recipe one command refuses, every command refuses.

Real `python -m toolkit` processes against a real HTTP server on 127.0.0.1: exit codes, lines and hits asserted."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.support.http import tiny_tarball
from tests.support.tools import ROOT


def _toolkit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TOOLKIT_MIRRORS", None)
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _recipe(tmp_path: Path, source_url: str, dep_url: str) -> Path:
    recipe = tmp_path / "pins.toml"
    recipe.write_text(f'[recipe]\nname = "pins"\n[source]\nurl = "{source_url}"\n'
                      f'[[fetchcontent]]\nname = "dep"\nurl = "{dep_url}"\n'
                      # a dependency of a feature no entry turns on: not fetched, so not asked to be pinned
                      '[[fetchcontent]]\nname = "winonly"\nurl = "http://127.0.0.1:9/winonly.tar.gz"\nwhen = "dml"\n'
                      '[features.dml]\nsummary = "Windows only"\ndefault = false\ndefine = "USE_DML"\n'
                      '[release]\npython = ["3.11"]\n[[release.target_set]]\nname = "cdna"\ntargets = ["gfx90a"]\n')
    return recipe


def test_a_release_and_its_plan_refuse_an_unpinned_source_naming_it_and_the_lock_command(tmp_path, server):
    data = tiny_tarball()
    source_url = server.add("/src-1.tar.gz", data)
    dep_url = server.add("/dep-1.tar.gz", data)
    recipe = _recipe(tmp_path, source_url, dep_url)
    out = tmp_path / "dist"
    expected = [f"error: {recipe}: release builds need a sha256 (or a content digest) for every archive they fetch; "
                "2 have none in the recipe or in pins.lock.toml:",
                f"  source: {source_url}", f"  fetchcontent dep: {dep_url}",
                f"  hint: run `nox -s lock -- --recipe {recipe}` on a machine with network access and commit "
                "pins.lock.toml"]
    for args in (("--dry-run",), (), ("--only", "cp311-cdna")):
        proc = _toolkit(tmp_path, "release", "--recipe", str(recipe), "--out", str(out),
                        "--build-dir", str(tmp_path / "build"), *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.splitlines() == expected, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and "pinned sources:" not in proc.stdout
    build = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--require-pinned", "--dry-run",
                     "--build-dir", str(tmp_path / "build"))
    assert build.returncode == 2 and build.stderr.splitlines()[-4:] == expected, build.stderr
    assert server.hits.get("/src-1.tar.gz", 0) == 0 and server.hits.get("/dep-1.tar.gz", 0) == 0
    assert not out.exists() and not (tmp_path / "build").exists()

    # Pinned (the source in the lock file, the dependency by the recipe's own sha256): the plan says so.
    sha = hashlib.sha256(data).hexdigest()
    (tmp_path / "pins.lock.toml").write_text(f'version = 1\n[sha256]\n"{source_url}" = "{sha}"\n')
    recipe.write_text(recipe.read_text().replace(f'url = "{dep_url}"\n', f'url = "{dep_url}"\nsha256 = "{sha}"\n'))
    plan = _toolkit(tmp_path, "release", "--recipe", str(recipe), "--out", str(out), "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert ("pinned sources: 2 archive(s) the entries fetch, each with a sha256 or content digest (recipe or "
            "pins.lock.toml); a release refuses an unpinned one") in plan.stdout.splitlines()
    assert _toolkit(tmp_path, "build", "--recipe", str(recipe), "--require-pinned", "--dry-run",
                    "--build-dir", str(tmp_path / "build")).returncode == 0


def test_every_release_entry_builds_with_require_pinned():
    from toolkit.pipeline.options import build_argv
    from toolkit.release.entry import entry_options
    from toolkit.release.matrix import plan_matrix
    from toolkit.release.request import load_settings

    recipe = ROOT / "recipes" / "umbrella-ep-real.toml"
    for entry in plan_matrix(load_settings(recipe)):
        options = entry_options(recipe, entry)
        assert options.require_pinned and "--require-pinned" in build_argv(options)


def test_the_readers_that_went_around_load_recipe_refuse_what_it_refuses(tmp_path):
    """`lock`, `release` and `meta-wheel` read their sections through load_recipe: a recipe whose name is not its
    file's (which `build` refuses: it would build into another recipe's folder) is refused by each, in one line."""
    recipe = tmp_path / "copy.toml"
    recipe.write_text((ROOT / "recipes" / "amdgpu-ep.toml").read_text().replace(
        'extends = "shared/umbrella-features.toml"', f'extends = "{ROOT / "recipes/shared/umbrella-features.toml"}"')
        .replace('path = "../samples/umbrella-ep"', f'path = "{ROOT / "samples/umbrella-ep"}"'))
    line = (f"error: {recipe}: key 'recipe.name': 'amdgpu-ep' is not the file's name; a recipe's name is its "
            "file's stem ('copy' for copy.toml)")
    for args in (("lock", "--recipe", str(recipe)), ("release", "--recipe", str(recipe), "--print-matrix"),
                 ("meta-wheel", "--recipe", str(recipe), "--out", str(tmp_path / "out")),
                 ("build", "--recipe", str(recipe), "--dry-run")):
        proc = _toolkit(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.splitlines()[0] == line, (args, proc.stderr)
    assert not (tmp_path / "out").exists() and not (tmp_path / "copy.lock.toml").exists()
