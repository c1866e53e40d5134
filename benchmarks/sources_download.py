"""Throughput of the sources layer on this machine: download from 127.0.0.1, cache hit, extraction.

Run: python benchmarks/sources_download.py [--mib 64]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import platform
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.http import FaultServer  # noqa: E402
from toolkit.sources.cache import Cache  # noqa: E402
from toolkit.sources.download import DownloadOptions, fetch  # noqa: E402
from toolkit.sources.extract import extract_archive  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=64)
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")
    data = os.urandom(args.mib << 20)
    sha = hashlib.sha256(data).hexdigest()
    server = FaultServer()
    options = DownloadOptions(progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Cache(Path(tmp) / "cache")
        url = server.add("/big.bin", data)
        t = time.perf_counter()
        fetch(url, sha, cache, options=options)
        dt = time.perf_counter() - t
        print(f"download+verify {args.mib} MiB from 127.0.0.1: {dt:.2f} s ({args.mib / dt:.0f} MiB/s)")
        t = time.perf_counter()
        fetch(url, sha, cache, options=options)
        print(f"cache hit: {(time.perf_counter() - t) * 1000:.2f} ms")
        drop = server.add("/drop.bin", data, fault="drop", times=1)
        cache2 = Cache(Path(tmp) / "cache2")
        t = time.perf_counter()
        fetch(drop, sha, cache2, options=DownloadOptions(progress=False, backoff=0.0))
        print(f"download with one dropped connection + Range resume: {time.perf_counter() - t:.2f} s")
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tf:
            for i in range(2000):
                payload = (f"// file {i}\n" * 200).encode()
                info = tarfile.TarInfo(f"src-1.0/dir{i % 50}/f{i}.cc")
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload))
        archive = Path(tmp) / "src.tar.gz"
        archive.write_bytes(buf.getvalue())
        t = time.perf_counter()
        extract_archive(archive, Path(tmp) / "tree")
        print(f"safe extraction of 2000 files ({len(buf.getvalue()) >> 10} KiB tar.gz): "
              f"{time.perf_counter() - t:.2f} s")
    server.stop()


if __name__ == "__main__":
    main()
