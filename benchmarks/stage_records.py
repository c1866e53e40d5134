"""What checking a stage's outputs costs: recording and re-checking a folder output (every entry's path,
size and mtime) and a file output (size and mtime; sha256 when only the mtime moved).

    python benchmarks/stage_records.py [TREE]   (default: the bundled sample; pass a real source tree)

Prints the machine, the tree's file count and the median of 5 runs of each case.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolkit.pipeline.runner import output_change, output_record  # noqa: E402


def median_ms(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    tree = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "samples" / "umbrella-ep"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}")
    record = output_record(tree)
    print(f"tree {tree}: {record['files']} files")
    print(f"  record folder:       {median_ms(lambda: output_record(tree)):9.1f} ms")
    print(f"  check folder:        {median_ms(lambda: output_change(tree, dict(record))):9.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "lib.so"
        lib.write_bytes(os.urandom(64 << 20))
        rec = output_record(lib)
        print("file of 64 MiB:")
        print(f"  record (sha256):     {median_ms(lambda: output_record(lib)):9.1f} ms")
        print(f"  check, unchanged:    {median_ms(lambda: output_change(lib, dict(rec))):9.1f} ms")
        os.utime(lib, ns=(1, 1))
        print(f"  check, only touched: {median_ms(lambda: output_change(lib, {**rec, 'mtime_ns': 0})):9.1f} ms")


if __name__ == "__main__":
    main()
