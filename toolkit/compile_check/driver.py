"""Runs inside the build root (standard library only): compile a list of units in parallel.

    python3 driver.py JOBS.json RESULTS.json N

JOBS.json: [{"unit": ..., "argv": [...], "cwd": ...}]; RESULTS.json: [{"unit", "rc", "seconds", "stderr"}].
Only the first 64 KiB of a unit's diagnostics are kept: the first error is what the report shows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def compile_one(job: dict[str, Any]) -> dict[str, Any]:
    started = time.monotonic()
    try:
        proc = subprocess.run(job["argv"], cwd=job.get("cwd"), capture_output=True, text=True,
                              errors="replace")
        rc, err = proc.returncode, proc.stderr
    except OSError as exc:
        rc, err = 127, f"error: could not run {job['argv'][0]}: {exc}"
    return {"unit": job["unit"], "rc": rc, "seconds": time.monotonic() - started, "stderr": err[:65536]}


def main() -> None:
    jobs_file, results_file, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(jobs_file, encoding="utf-8") as f:
        jobs = json.load(f)
    results = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for i, res in enumerate(pool.map(compile_one, jobs), 1):
            results.append(res)
            # One line per unit as it finishes: a long check shows its progress.
            print(f"[{i}/{len(jobs)}] {'ok  ' if res['rc'] == 0 else 'FAIL'} {res['unit']} ({res['seconds']:.1f} s)",
                  flush=True)
    with open(results_file + ".tmp", "w", encoding="utf-8") as f:
        json.dump(results, f)
    os.replace(results_file + ".tmp", results_file)


if __name__ == "__main__":
    main()
