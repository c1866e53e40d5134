"""Issue 35, item 14: a small download is one line, under the recipe it is for; a large one still shows progress.

A real HTTP server on 127.0.0.1 serves a real ORT-shaped package (the recipe's [ort], fetched before any stage)."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile

from tests.support.tools import ROOT
from toolkit.sources.progress import SMALL


def _ort_package(padding: int) -> bytes:
    files = {"include/onnxruntime_c_api.h": b"/* C API */\n",
             "lib/cmake/onnxruntime/onnxruntimeConfig.cmake": b"# config\n",
             "lib/padding.bin": os.urandom(padding)}  # random: gzip keeps its size
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(f"ort/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _build(tmp_path, server, padding: int) -> tuple[str, list[str]]:
    data = _ort_package(padding)
    url = server.add(f"/ort-{padding}.tar.gz", data)
    tree = tmp_path / "tree"
    tree.mkdir(exist_ok=True)
    (tree / "CMakeLists.txt").write_text("project(t LANGUAGES CXX)\n")
    recipe = tmp_path / "t.toml"
    recipe.write_text(f'[recipe]\nname = "t"\n[source]\npath = "{tree}"\n[requires]\nalways = ["ort"]\n'
                      f'[ort]\nversion = "1.0.0"\n[[ort.package]]\nplatform = "linux-x64"\nurl = "{url}"\n'
                      f'sha256 = "{hashlib.sha256(data).hexdigest()}"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(tmp_path / f"cache-{padding}")}
    env.pop("TOOLKIT_MIRRORS", None)
    proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "--recipe", str(recipe), "--until", "source",
                           "--build-dir", str(tmp_path / "b")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return url, proc.stderr.splitlines()


def test_a_small_download_is_one_line_after_the_recipe_header(tmp_path, server):
    url, lines = _build(tmp_path, server, 150 * 1024)
    assert lines[0].startswith(f"[toolkit] recipe t ({tmp_path / 't.toml'}), variant release, features: ")
    about = [line for line in lines if url in line]
    assert len(about) == 1 and about[0].startswith(f"[toolkit] done: {url} (150.") and " KiB in " in about[0]
    assert lines.index(about[0]) == 1


def test_a_large_download_still_says_it_started_and_how_far_it_is(tmp_path, server):
    url, lines = _build(tmp_path, server, 2 * SMALL)
    about = [line for line in lines if url in line]
    assert about[0].startswith(f"[toolkit] downloading {url} (2.0 MiB)") and about[-1].startswith("[toolkit] done: ")
    assert [line for line in lines if line.startswith("[toolkit]   ") and line.endswith(f"% of {url}")]
    assert lines[0].startswith("[toolkit] recipe t (")
