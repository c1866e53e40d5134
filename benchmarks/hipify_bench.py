"""Hipify speed against torch's hipify_python: one core and default jobs, whole process and conversion only.

    python benchmarks/hipify_bench.py CORPUS [CORPUS ...] [--torch-hipify DIR] [--repeat 5] [--jobs N]

CORPUS: folders of CUDA sources, copied side by side into one tree that both converters read. The documented
corpus is ORT 1.22.1's CUDA EP from the mirror's archive (docs/explanation/hipify.md); with no CORPUS a
synthetic tree is made from tests/data/cuda_corpus (--files files).

The reference is torch 2.13's `torch/utils/hipify` module, loaded by file path WITHOUT `import torch` (it
needs only the standard library; `import torch` alone costs seconds and would flatter us): --torch-hipify
DIR names that folder, else it is looked up in this interpreter's torch install (find_spec imports nothing).

Every figure is a fresh process, run in interleaved pairs (ours, torch), the median of --repeat:
- whole process: wall time of `python -m toolkit hipify TREE OUT --jobs N -q --no-progress`, against
  `python -c "<load torch's module by path>; hipify(TREE, output_directory=OUT)"`;
- conversion only: the time inside such a process around hipify_tree() / hipify(), imports excluded;
- CPU: user + sys seconds of the whole child process (all of its workers);
- ours also warm (nothing changed) and after touching one file (the content changes, so it is redone).
torch's hipify has no workers: its figures are the same run at every job count (repeated per pair).
"CUDA names left" counts, in both outputs the same way, the identifiers in code (not comments or strings)
that our tables map to another name or know as unsupported, and those that look like CUDA's at all
(the detect patterns: these include a project's own CUDA_* macros).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "cuda_corpus"

OURS = """
import json, sys, time
sys.path.insert(0, {root!r})
from toolkit.hipify import hipify_tree
from toolkit.recipe.hipify import HipifySettings
start = time.perf_counter()
report = hipify_tree(HipifySettings(), {src!r}, {out!r}, jobs={jobs}, progress=False)
print(json.dumps({{"seconds": time.perf_counter() - start, "converted": len(report.converted)}}))
"""

# torch's module loaded as a package of its own from its folder: `import torch` never runs.
TORCH = """
import contextlib, importlib.util, io, json, sys, time
spec = importlib.util.spec_from_file_location("hipify", {init!r}, submodule_search_locations=[{folder!r}])
package = importlib.util.module_from_spec(spec)
sys.modules["hipify"] = package
spec.loader.exec_module(package)
from hipify import hipify_python
start = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    result = hipify_python.hipify(project_directory={src!r}, output_directory={out!r}, show_progress=False)
print(json.dumps({{"seconds": time.perf_counter() - start, "converted": len(result)}}))
"""

_CODE_TOKEN = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|([A-Za-z_]\w*)""", re.S)
_SOURCE_SUFFIXES = {".cu", ".cuh", ".h", ".hpp", ".cc", ".cpp", ".c", ".hip", ".inl", ".in"}


def machine_line() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"machine: {platform.platform()}, {model}, {os.cpu_count()} CPUs, load {load}, "
            f"Python {platform.python_version()}")


def find_torch_hipify(given: Path | None) -> Path | None:
    if given:
        return given if (given / "hipify_python.py").is_file() else None
    import importlib.util
    spec = importlib.util.find_spec("torch")  # finds the folder; torch is not imported
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "utils" / "hipify"
    return folder if (folder / "hipify_python.py").is_file() else None


def make_tree(dest: Path, corpora: list[Path], files: int) -> None:
    if corpora:
        for corpus in corpora:
            shutil.copytree(corpus, dest / corpus.name, dirs_exist_ok=True)
        return
    sources = sorted(p for p in CORPUS.iterdir() if p.suffix in (".cu", ".cuh", ".cc", ".h"))
    made, i = 0, 0
    while made < files:  # headers keep their names (sources include them), one set per folder of 100
        src = sources[i % len(sources)]
        folder = dest / f"part{made // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (src.name if src.suffix == ".cuh" else f"{src.stem}_{i}{src.suffix}")
        if not target.exists():
            target.write_text(src.read_text() + f"// copy {i}\n")
            made += 1
        i += 1


def timed(cmd: list[str]) -> dict:
    """One child process: its wall and CPU seconds, and the JSON its last line printed (if any)."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    after = os.times()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchmark run failed: {' '.join(cmd[:4])} ...\n{proc.stderr[-3000:]}")
    last = proc.stdout.strip().splitlines()[-1:] or ["{}"]
    inner = json.loads(last[0]) if last[0].startswith("{") else {}
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall": wall, "cpu": cpu, "inner": inner.get("seconds")}


def ours_whole(tree: Path, out: Path, jobs: int) -> dict:
    return timed([sys.executable, "-m", "toolkit", "hipify", str(tree), str(out), "--jobs", str(jobs),
                  "--no-progress", "-q"])


def ours_inner(tree: Path, out: Path, jobs: int) -> dict:
    return timed([sys.executable, "-c", OURS.format(root=str(ROOT), src=str(tree), out=str(out), jobs=jobs)])


def torch_run(folder: Path, tree: Path, out: Path) -> dict:
    return timed([sys.executable, "-c", TORCH.format(init=str(folder / "__init__.py"), folder=str(folder),
                                                     src=str(tree), out=str(out))])


def names_left(out: Path) -> tuple[int, int]:
    """(CUDA API names our tables know, CUDA-looking names) left in the code of every output file."""
    sys.path.insert(0, str(ROOT))
    from toolkit.hipify.tables import load_tables
    tables = load_tables({"dnn": "miopen"})
    known = {n for n, new in tables.identifiers.items() if new != n} | set(tables.calls) | set(tables.unsupported)
    api = looking = 0
    for path in out.rglob("*"):
        if path.suffix not in _SOURCE_SUFFIXES or not path.is_file():
            continue
        for m in _CODE_TOKEN.finditer(path.read_text(encoding="utf-8", errors="replace")):
            name = m.group(1)
            if name:
                api += name in known
                looking += name in known or tables.is_cuda_identifier(name)
    return api, looking


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    return path


def series(tree: Path, tmp: Path, jobs: int, torch: Path | None, repeat: int) -> dict[str, list[dict]]:
    """Interleaved cold runs: ours whole process, ours conversion only, torch (whole and inner in one)."""
    runs: dict[str, list[dict]] = {"ours whole": [], "ours inner": [], "torch": []}
    for _ in range(repeat):
        runs["ours whole"].append(ours_whole(tree, fresh(tmp / "out-ours"), jobs))
        runs["ours inner"].append(ours_inner(tree, fresh(tmp / "out-ours"), jobs))
        if torch:
            runs["torch"].append(torch_run(torch, tree, fresh(tmp / "out-torch")))
    return runs


def reruns(tree: Path, tmp: Path, jobs: int, repeat: int) -> dict[str, list[dict]]:
    """Ours warm (nothing changed) and after one file was touched, whole process."""
    out = tmp / "out-ours"
    ours_whole(tree, fresh(out), jobs)
    touch = min(tree.rglob("*.cu"))
    runs: dict[str, list[dict]] = {"warm": [], "one touched": []}
    for i in range(repeat):
        runs["warm"].append(ours_whole(tree, out, jobs))
        with open(touch, "a") as handle:
            handle.write(f"// touched {i}\n")
        runs["one touched"].append(ours_whole(tree, out, jobs))
    return runs


def med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def report(files: int, jobs: int, runs: dict, again: dict) -> None:
    print(f"\n--jobs {jobs} (cold, {len(runs['ours whole'])} pairs, medians)")
    print(f"{'':<30} {'whole process s':>16} {'CPU s':>7} {'conversion s':>13} {'files/s':>8}")
    rows = [("ours", runs["ours whole"], runs["ours inner"])]
    if runs["torch"]:
        rows.append(("torch hipify_python", runs["torch"], runs["torch"]))
    for name, whole, inner in rows:
        conv = med(inner, "inner")
        print(f"{name:<30} {med(whole, 'wall'):>16.3f} {med(whole, 'cpu'):>7.2f} {conv:>13.3f} {files / conv:>8.0f}")
    if runs["torch"]:
        whole = med(runs["torch"], "wall") / med(runs["ours whole"], "wall")
        conv = med(runs["torch"], "inner") / med(runs["ours inner"], "inner")
        print(f"{'ratio torch / ours':<30} {whole:>15.2f}x {'':>7} {conv:>12.2f}x")
    for label, rows_ in again.items():
        print(f"{'ours ' + label:<30} {med(rows_, 'wall'):>16.3f} {med(rows_, 'cpu'):>7.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="*", type=Path, help="folders of CUDA sources (default: synthetic)")
    parser.add_argument("--files", type=int, default=2000, help="synthetic tree size (no CORPUS)")
    parser.add_argument("--torch-hipify", type=Path, help="torch/utils/hipify folder of torch 2.13")
    parser.add_argument("--repeat", type=int, default=5, help="pairs per figure (medians)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="the default-jobs figure's N")
    args = parser.parse_args()
    torch = find_torch_hipify(args.torch_hipify)
    for corpus in args.corpus:
        if not corpus.is_dir():
            raise SystemExit(f"error: {corpus} is not a folder of CUDA sources")
    with tempfile.TemporaryDirectory(prefix="hipify-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tree = tmp / "tree"
        make_tree(tree, args.corpus, args.files)
        files = sum(1 for p in tree.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
        print(machine_line())
        print(f"tree: {', '.join(map(str, args.corpus)) or 'synthetic (tests/data/cuda_corpus)'}: "
              f"{files} files, {size / 1e6:.1f} MB")
        print(f"torch: {torch or 'not found (--torch-hipify DIR, torch 2.13 torch/utils/hipify): ours only'}")
        for jobs in dict.fromkeys((1, args.jobs)):
            runs = series(tree, tmp, jobs, torch, args.repeat)
            report(files, jobs, runs, reruns(tree, tmp, jobs, args.repeat))
        ours_inner(tree, fresh(tmp / "out-ours"), 1)
        left = [("ours", names_left(tmp / "out-ours"))]
        if torch:
            torch_run(torch, tree, fresh(tmp / "out-torch"))
            left.append(("torch hipify_python", names_left(tmp / "out-torch")))
        print("\nCUDA names left in the output's code: (known to the tables, CUDA-looking incl. project macros)")
        for name, (api, looking) in left:
            print(f"{name:<30} {api:>8} {looking:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
