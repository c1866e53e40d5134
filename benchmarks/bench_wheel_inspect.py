"""Time `inspect` on a real AMD wheel and the GPU-target scan of its 490 MB .hip_fatbin section.

    python benchmarks/bench_wheel_inspect.py [WHEEL]

WHEEL defaults to the onnxruntime-rocm 1.22.2.post3 wheel the tests cache. Prints the machine too.
"""

from __future__ import annotations

import os
import platform
import resource
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit.binary.offload_bundle import offload_report  # noqa: E402
from toolkit.util.cachedir import default_cache_dir  # noqa: E402
from toolkit.wheel.inspection import inspect_wheel  # noqa: E402

# Where tests/wheel/test_rocm_wheel.py keeps it (TOOLKIT_TEST_CACHE moves it there too).
DEFAULT = Path(os.environ.get("TOOLKIT_TEST_CACHE") or default_cache_dir() / "test-wheels") / "onnxruntime-rocm"


def main() -> None:
    wheel = Path(sys.argv[1]) if len(sys.argv) > 1 else next(iter(sorted(DEFAULT.glob("*.whl"))), None)
    if wheel is None:
        sys.exit("no wheel: run tests/wheel/test_rocm_wheel.py once, or pass a wheel path")
    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    start = time.perf_counter()
    report = inspect_wheel(wheel)
    print(f"inspect {wheel.name}: {time.perf_counter() - start:.2f} s, {len(report.libraries)} libraries, "
          f"targets {', '.join(report.gpu_targets)}")
    with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as tmp:
        biggest = max((i for i in archive.infolist() if i.filename.endswith(".so")), key=lambda i: i.file_size)
        path = Path(archive.extract(biggest, tmp))
        start = time.perf_counter()
        scan = offload_report(path)
        print(f"offload scan of {biggest.filename} ({biggest.file_size / 1e6:.0f} MB): "
              f"{time.perf_counter() - start:.2f} s, {scan.bundles} bundles")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
