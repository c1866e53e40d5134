"""ORT 1.22.1's ROCm EP recipe: hipify speed per engine, side by side in one run, and compile rate per engine.

    python benchmarks/hipify_ort.py [--mirror BASE] [--source TREE|ARCHIVE] [--jobs N] [--compile] [--sample]

The tree (default: the recipe's [source], ORT 1.22.1's tag archive verified by its content pin and taken
from --mirror BASE first, default $TOOLKIT_MIRRORS: e.g. --mirror file://$PWD/../shared/upstream/mirror;
unpacked into a temporary folder) goes through recipes/onnxruntime-rocm-ep.toml's [hipify] settings with
each engine, in a fresh Python process each (import costs excluded, the same --jobs for all):
  builtin      cold (empty output), then warm (rerun, nothing changed: must convert nothing)
  hipify-perl  cold (ROCm's 7.0.2 script; on PATH, else the build root's usr/bin/hipify-perl)
  torch        cold, over the same selected files, when torch is installed
Files/s counts the files each engine converted. With --compile, each engine's output then goes through
`python -m toolkit compile-check` (the build root's hipcc, gfx942) and the rate is printed; without it,
rates from earlier compile-check runs in build/onnxruntime-rocm-ep/<engine>/ are shown when present.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "recipes" / "onnxruntime-rocm-ep.toml"

OURS = """
import dataclasses, json, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from toolkit.recipe.load import load_recipe
from toolkit.hipify import hipify_tree
settings = load_recipe(Path({recipe!r})).hipify
settings = dataclasses.replace(settings, engine={engine!r}, hipify_perl={perl!r})
start = time.perf_counter()
report = hipify_tree(settings, Path({src!r}), Path({out!r}), jobs={jobs}, progress=False)
print(json.dumps({{"seconds": time.perf_counter() - start, "converted": len(report.converted),
                  "unchanged": report.unchanged, "unmapped": len(report.unmapped)}}))
"""

TORCH = """
import contextlib, io, json, time
from torch.utils.hipify import hipify_python
start = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    result = hipify_python.hipify(project_directory={src!r}, output_directory={out!r}, show_progress=False,
                                  includes=[{inc!r}])
print(json.dumps({{"seconds": time.perf_counter() - start, "converted": len(result), "unchanged": 0}}))
"""


def run_py(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: benchmark step failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def unpack(source: Path, work: Path) -> Path:
    if source.is_dir():
        return source
    with tarfile.open(source) as tf:
        tf.extractall(work / "src", filter="data")
    tops = list((work / "src").iterdir())
    return tops[0] if len(tops) == 1 else work / "src"


def recipe_source(mirrors: list[str], work: Path) -> Path:
    """The recipe's own [source] (upstream's URL, content-pinned), fetched through the mirrors first."""
    sys.path.insert(0, str(ROOT))
    from toolkit.recipe.load import load_recipe
    from toolkit.sources.context import FetchContext
    from toolkit.sources.source import resolve_source
    from toolkit.util.errors import ToolkitError

    recipe = load_recipe(RECIPE)
    try:
        return resolve_source(recipe.source, FetchContext.create(RECIPE, mirrors=mirrors), work / "src")
    except ToolkitError as exc:
        sys.exit(f"error: {exc}\n(pass --mirror BASE holding the archive, or --source with ORT 1.22.1's tree)")


def find_perl(explicit: str | None) -> str | None:
    """The hipify-perl compile-check uses: given, on PATH, else the build root's (made if need be)."""
    sys.path.insert(0, str(ROOT))
    from toolkit.cli.compile_check import hipify_perl_path
    from toolkit.util.errors import ToolkitError

    try:
        return hipify_perl_path(explicit)
    except ToolkitError as exc:
        print(f"hipify-perl: {exc}")
        return None


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def compile_rates(engines: list[str], args) -> dict[str, dict]:
    rates = {}
    if args.compile:
        cmd = [sys.executable, "-m", "toolkit", "-q", "compile-check", "--recipe", str(RECIPE)]
        for e in engines:
            cmd += ["--engine", e]
        if args.sample:
            cmd.append("--sample")
        if args.source:
            cmd += ["--source", str(args.source)]
        for mirror in args.mirror:
            cmd += ["--mirror", mirror]
        subprocess.run(cmd, cwd=ROOT, check=False)
    for e in engines:
        path = ROOT / "build" / "onnxruntime-rocm-ep" / e / "compile-check.json"
        if path.is_file():
            rates[e] = json.loads(path.read_text())
    return rates


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, default=None,
                    help="ORT 1.22.1 tree or archive (default: the recipe's [source], through --mirror)")
    ap.add_argument("--mirror", action="append", default=None, metavar="BASE",
                    help="artifact mirror (BASE/<host>/<path>) tried before upstream, repeatable "
                         "(default: $TOOLKIT_MIRRORS)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--hipify-perl", default=None)
    ap.add_argument("--compile", action="store_true", help="also run the compile check for each engine")
    ap.add_argument("--sample", action="store_true", help="with --compile: only the recipe's sample units")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    if args.mirror is None:
        args.mirror = [m for m in os.environ.get("TOOLKIT_MIRRORS", "").replace(",", " ").split() if m]
    if args.source is not None and not args.source.exists():
        sys.exit(f"error: {args.source} does not exist; pass --source with ORT 1.22.1's tree or archive")
    perl = find_perl(args.hipify_perl)

    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="hipify-ort-") as tmp:
        work = Path(tmp)
        src = unpack(args.source, work) if args.source else recipe_source(args.mirror, work)
        print(f"tree: {src} ({args.source or 'the recipe source'})")
        rows = []

        def ours(engine: str, out: Path) -> dict:
            return run_py(OURS.format(root=str(ROOT), recipe=str(RECIPE), engine=engine, perl=perl or "hipify-perl",
                                      src=str(src), out=str(out), jobs=args.jobs))

        cold = ours("builtin", work / "out-builtin")
        warm = ours("builtin", work / "out-builtin")
        rows += [("builtin (cold)", cold), ("builtin (rerun)", warm)]
        if perl:
            rows.append(("hipify-perl (cold)", ours("hipify-perl", work / "out-perl")))
        else:
            print("hipify-perl: not found (install ROCm's hipify, or let the build root be made)")
        if not args.no_torch:
            try:
                import importlib.util
                has_torch = importlib.util.find_spec("torch") is not None
            except ImportError:
                has_torch = False
            if has_torch:
                rows.append(("torch (cold)", run_py(TORCH.format(
                    src=str(src), out=str(work / "out-torch"),
                    inc=str(src / "onnxruntime/core/providers/cuda") + "/*"))))
            else:
                print("torch: not installed (pip install torch to compare with torch.utils.hipify)")

        print(f"{'engine':<20} {'seconds':>9} {'converted':>10} {'files/s':>10}")
        for name, r in rows:
            rate = r["converted"] / r["seconds"] if r["seconds"] > 0 and r["converted"] else 0.0
            print(f"{name:<20} {r['seconds']:9.3f} {r['converted']:>10} {rate:10.1f}")
        if perl:
            perl_s = rows[2][1]["seconds"]
            print(f"built-in vs hipify-perl (cold, same files, same --jobs {args.jobs}): "
                  f"{perl_s / cold['seconds']:.1f}x faster")
        print(f"rerun with nothing changed: {warm['converted']} converted, {warm['unchanged']} unchanged")

    engines = ["builtin"] + (["hipify-perl"] if perl else [])
    for engine, rep in compile_rates(engines, args).items():
        print(f"compile rate [{engine}]: {rep['compiled']}/{rep['units']} units ({100 * rep['rate']:.1f}%) "
              f"for gfx942")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
