"""Time the patch stage on a generated tree: check, apply, re-check (already applied) and refresh.

    python benchmarks/patch_apply.py [--files 400] [--lines 2000] [--patches 3]

Each patch changes 3 places in every third file, plus a 5-line shift so every hunk lands at an offset.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit.patching import analyze, apply_series, load_series, refresh_series  # noqa: E402
from toolkit.patching.diff import write_file_diff  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--patches", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="patch-bench-"))
    try:
        pristine, patches = work / "pristine", work / "patches"
        patches.mkdir()
        state = {}
        for f in range(args.files):
            text = "".join(f"int f{f}_line{i} = {i};\n" for i in range(args.lines)).encode()
            path = pristine / f"src/d{f % 20}/file{f}.cc"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
            state[path.relative_to(pristine).as_posix()] = text
        series_lines = []
        for p in range(args.patches):
            diffs = []
            for n, (rel, old) in enumerate(sorted(state.items())):
                if n % 3 != p % 3:
                    continue
                lines = old.split(b"\n")
                for at in (args.lines // 4, args.lines // 2, 3 * args.lines // 4):
                    lines[at + p] = lines[at + p] + b" // patched " + str(p).encode()
                new = b"\n".join(lines)
                diffs.append(write_file_diff(rel, old, new))
                state[rel] = new
            data = b"".join(diffs)
            name = f"{p + 1:04d}-bench.patch"
            (patches / name).write_bytes(data)
            series_lines.append(f"# Benchmark patch {p + 1}.\n{name} phase=base "
                                f"sha256={hashlib.sha256(data).hexdigest()}\n")
        (patches / "series").write_text("".join(series_lines))
        # Shift every file by 5 lines so each hunk applies at an offset.
        tree = work / "tree"
        shutil.copytree(pristine, tree)
        for path in tree.rglob("*.cc"):
            path.write_bytes(b"// shifted\n" * 5 + path.read_bytes())
        series = load_series(patches / "series")
        timings = {}
        t = time.perf_counter()
        lines = analyze(series, tree, "base")
        timings["check (offsets)"] = time.perf_counter() - t
        t = time.perf_counter()
        apply_series(series, tree, "base")
        timings["apply"] = time.perf_counter() - t
        t = time.perf_counter()
        again = analyze(series, tree, "base")
        timings["check (already applied)"] = time.perf_counter() - t
        shifted = work / "shifted"
        shutil.copytree(pristine, shifted)
        for path in shifted.rglob("*.cc"):
            path.write_bytes(b"// shifted\n" * 5 + path.read_bytes())
        t = time.perf_counter()
        refresh_series(series, shifted, tree, "base", write=False)
        timings["refresh (no edits, in memory)"] = time.perf_counter() - t
        hunks = args.patches * 3 * (args.files // 3)
        print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} CPUs, Python {platform.python_version()}")
        print(f"tree: {args.files} files x {args.lines} lines; series: {args.patches} patches, ~{hunks} hunks")
        print(f"analysis: {lines[0].line} / {again[0].line.split(': ', 1)[1]}"[:160])
        for name, seconds in timings.items():
            print(f"{name:32s} {seconds:8.3f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
