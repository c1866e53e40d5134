"""Hipify throughput: files/s cold, warm (nothing changed) and after touching one file.

    python benchmarks/hipify_bench.py [TREE] [--files 2000] [--jobs N] [--no-torch]

Without TREE, a synthetic tree is made in a temporary folder by replicating tests/data/cuda_corpus to
--files files. Where torch is installed (pip install torch==2.13.0), the same tree also goes through
torch.utils.hipify.hipify_python in the same run. Each measurement runs in a fresh Python process
that imports its converter first and times only the conversion, so import costs (torch's are
seconds) and in-process caches do not blur the numbers.

"Touch one file" appends a comment line, so the file's content (the cache key) changes. torch's
hipify keeps no per-file cache: it copies the tree on its first run only and reprocesses every file
on every run, so its warm and touched runs are full reruns (and it does not see the edit, since it
converts its copy in place).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "cuda_corpus"

OURS = """
import json, sys, time
sys.path.insert(0, {root!r})
from toolkit.hipify import HipifySettings, hipify_tree
start = time.perf_counter()
report = hipify_tree(HipifySettings(), {src!r}, {out!r}, jobs={jobs}, progress=False)
print(json.dumps({{"seconds": time.perf_counter() - start, "converted": len(report.converted),
                  "unchanged": report.unchanged}}))
"""

TORCH = """
import contextlib, io, json, time
from torch.utils.hipify import hipify_python
start = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    result = hipify_python.hipify(project_directory={src!r}, output_directory={out!r}, show_progress=False)
print(json.dumps({{"seconds": time.perf_counter() - start, "converted": len(result), "unchanged": 0}}))
"""


def make_tree(dest: Path, count: int) -> None:
    # Headers keep their names (the sources include them by name), one set per folder of ~100 files.
    sources = sorted(p for p in CORPUS.iterdir() if p.suffix in (".cu", ".cuh", ".cc", ".h"))
    made, i = 0, 0
    while made < count:
        src = sources[i % len(sources)]
        folder = dest / f"part{made // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (src.name if src.suffix == ".cuh" else f"{src.stem}_{i}{src.suffix}")
        if not target.exists():
            target.write_text(src.read_text() + f"// copy {i}\n")
            made += 1
        i += 1


def measure(template: str, **kw) -> dict:
    proc = subprocess.run([sys.executable, "-c", template.format(**kw)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def count_files(tree: Path) -> int:
    return sum(1 for p in tree.rglob("*") if p.is_file())


def run_series(name: str, template: str, tree: Path, out: Path, touch: Path, jobs: int) -> list[tuple]:
    rows = []
    for label in ("cold", "warm", "one touched"):
        if label == "one touched":
            with open(touch, "a") as handle:
                handle.write("// touched\n")
        r = measure(template, root=str(ROOT), src=str(tree), out=str(out), jobs=jobs)
        rows.append((name, label, r))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, help="CUDA tree to hipify (default: synthetic)")
    parser.add_argument("--files", type=int, default=2000, help="synthetic tree size")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes for the toolkit engine")
    parser.add_argument("--no-torch", action="store_true", help="skip torch.utils.hipify")
    args = parser.parse_args()

    jobs = args.jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="hipify-bench-") as tmp:
        tmp = Path(tmp)
        if args.tree:
            tree = tmp / "tree"
            shutil.copytree(args.tree, tree)  # a copy, because "touch one file" edits it
        else:
            tree = tmp / "tree"
            make_tree(tree, args.files)
        files = count_files(tree)
        touch = next(p for p in sorted(tree.rglob("*.cu")))

        print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} CPUs, Python {platform.python_version()}")
        print(f"tree: {args.tree or 'synthetic (tests/data/cuda_corpus replicated)'}, {files} files; "
              f"toolkit engine jobs={jobs}")
        rows = run_series("toolkit", OURS, tree, tmp / "out-toolkit", touch, jobs)
        torch_note = ""
        if not args.no_torch:
            try:
                import torch.utils.hipify  # noqa: F401
            except ImportError:
                torch_note = "torch not installed: pip install torch==2.13.0 to compare"
            else:
                import torch
                torch_tree = tmp / "tree-torch"
                shutil.copytree(tree, torch_tree)
                touch_t = torch_tree / touch.relative_to(tree)
                rows += run_series(f"torch {torch.__version__} hipify", TORCH, torch_tree,
                                   tmp / "out-torch", touch_t, jobs)
        print(f"{'engine':<28} {'run':<12} {'seconds':>9} {'files/s':>10} {'converted':>10}")
        for name, label, r in rows:
            rate = files / r["seconds"] if r["seconds"] > 0 else float("inf")
            print(f"{name:<28} {label:<12} {r['seconds']:>9.3f} {rate:>10.0f} {r['converted']:>10}")
        if torch_note:
            print(torch_note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
