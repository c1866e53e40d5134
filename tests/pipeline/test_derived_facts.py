"""What a build derives from its inputs is made by the stage that owns it, once: the FetchContent dependencies are
fetched by the fetchcontent stage (so a dry run's plan, defines included, needs neither the network nor the
cache), and the build facts are made by the configure stage and handed on to check, build-info and the wheel."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

from tests.support.tools import ROOT
from toolkit.cli.main import main
from toolkit.pipeline.adapters import derive


def _counting_listener() -> tuple[socket.socket, list[int]]:
    """A mirror on 127.0.0.1 that accepts connections, counts them and answers none."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server, accepted


def test_a_dry_run_plans_the_fetchcontent_defines_without_the_network_or_the_cache(tmp_path):
    server, accepted = _counting_listener()
    cache, build = tmp_path / "cache", tmp_path / "build"
    cache.mkdir()
    mirror = f"http://127.0.0.1:{server.getsockname()[1]}"
    try:
        # --insecure-mirror: the plain-http mirror is used for every URL, so any fetch would reach it.
        proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "--recipe", "umbrella-ep-real", "--dry-run",
                               "--mirror", mirror, "--insecure-mirror", "--build-dir", str(build)],
                              cwd=ROOT, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(cache)})
    finally:
        server.close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    work = build / "umbrella-ep-real" / "release"
    assert "stages: source -> patch -> fetchcontent -> configure" in proc.stderr
    assert "  fetchcontent: onnx: https://github.com/onnx/onnx/" in proc.stdout
    assert f"-> {work / 'deps' / 'onnx'}" in proc.stdout
    for define in ("CMAKE_PROJECT_TOP_LEVEL_INCLUDES=", f"TOOLKIT_PROVIDER_MAP={work / 'deps'}/",
                   "FETCHCONTENT_FULLY_DISCONNECTED=ON"):
        assert f"  configure: define {define}" in proc.stdout, define
    assert accepted == [], "the dry run connected to the mirror"
    assert list(cache.iterdir()) == [], "the dry run wrote into the cache"
    assert not build.exists(), "the dry run created the build folder"


def test_a_build_makes_its_facts_once(tmp_path, monkeypatch, capsys):
    calls: list[str] = []
    facts = derive.facts

    def counted(*args, **kwargs):  # the real function, counted
        calls.append("facts")
        return facts(*args, **kwargs)

    monkeypatch.setattr(derive, "facts", counted)
    # The sample, packaged: its check, build-info and wheel stages all use the facts.
    assert main(["build", "--build-dir", str(tmp_path), "--wheel", "-q"]) == 0
    work = tmp_path / "amdgpu-ep" / "release"
    assert (work / "build-info.json").is_file() and list((work / "wheelhouse").glob("*.whl"))
    assert len(calls) == 1
