"""hipify_tree and the CLI: out-of-tree outputs, the cache, strictness, hipify-perl failures."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.tools import DATA
from toolkit.cli.main import build_parser, main
from toolkit.hipify import hipify_tree
from toolkit.hipify import tree as hipify_tree_module
from toolkit.hipify.tree import CACHE_NAME
from toolkit.recipe.hipify import Exclude, HipifySettings, Rename
from toolkit.util import log
from toolkit.util.errors import ToolkitError

CORPUS = DATA / "cuda_corpus"


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(CORPUS, src)
    return src, tmp_path / "out"


def mtimes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in root.rglob("*")
            if p.is_file() and p.name != CACHE_NAME}


def test_rerun_converts_nothing_and_touching_one_converts_one(tree):
    src, out = tree
    settings = HipifySettings()
    first = hipify_tree(settings, src, out, jobs=1)
    inputs = sorted(p.relative_to(src).as_posix() for p in src.rglob("*")
                    if settings.included(p.relative_to(src).as_posix()))
    assert sorted(first.converted) == inputs and first.unchanged == 0
    assert (out / "runtime_memcpy.cu").read_text().count("hipMemcpyAsync") == 2
    before = mtimes(out)

    second = hipify_tree(settings, src, out, jobs=1)
    assert second.converted == [] and second.unchanged == len(inputs)
    assert mtimes(out) == before

    with open(src / "fp16_math.cu", "a") as handle:
        handle.write("// edited\n")
    third = hipify_tree(settings, src, out, jobs=1)
    assert third.converted == ["fp16_math.cu"] and third.written == ["fp16_math.cu"]
    after = mtimes(out)
    assert after["fp16_math.cu"] != before["fp16_math.cu"]
    assert {k: v for k, v in after.items() if k != "fp16_math.cu"} == {
        k: v for k, v in before.items() if k != "fp16_math.cu"}
    # Findings survive in the cache: the unmapped list is the same on a run that converted nothing.
    assert [str(u) for u in third.unmapped] == [str(u) for u in first.unmapped]


def test_settings_change_reconverts_but_keeps_identical_outputs(tree):
    src, out = tree
    hipify_tree(HipifySettings(), src, out, jobs=1)
    before = mtimes(out)
    report = hipify_tree(HipifySettings(launch_syntax="hipLaunchKernelGGL"), src, out, jobs=1)
    assert len(report.converted) == len(before)
    changed = {k for k, v in mtimes(out).items() if v != before[k]}
    assert changed == set(report.written)
    assert "runtime_memcpy.cu" in changed and "common.cuh" not in changed  # no launch in common.cuh
    assert "hipLaunchKernelGGL(AddOne," in (out / "runtime_memcpy.cu").read_text()


def test_removed_or_renamed_inputs_remove_their_outputs(tree):
    src, out = tree
    hipify_tree(HipifySettings(), src, out, jobs=1)
    (src / "cufft_plan.cc").unlink()
    (out / "unrelated.txt").write_text("kept")
    report = hipify_tree(HipifySettings(), src, out, jobs=1)
    assert report.removed == ["cufft_plan.cc"] and not (out / "cufft_plan.cc").exists()
    assert (out / "unrelated.txt").read_text() == "kept"
    renamed = HipifySettings(suffixes=((".cu", ".hip"),))
    report = hipify_tree(renamed, src, out, jobs=1)
    assert (out / "batch_pad.hip").is_file() and not (out / "batch_pad.cu").exists()
    assert "batch_pad.cu" in report.removed


def test_parallel_run_matches_serial(tree, tmp_path, monkeypatch):
    src, out = tree
    for i in range(30):
        shutil.copy(src / "warp_reduce.cu", src / f"copy_{i}.cu")
    monkeypatch.setattr(hipify_tree_module, "_PARALLEL_MIN_BYTES", 0)  # this small tree through the pool too
    serial = hipify_tree(HipifySettings(), src, tmp_path / "serial", jobs=1)
    parallel = hipify_tree(HipifySettings(), src, out, jobs=2)
    assert sorted(parallel.converted) == sorted(serial.converted)
    for rel in serial.outputs.values():
        assert (out / rel).read_bytes() == (tmp_path / "serial" / rel).read_bytes()
    assert [str(w) for w in parallel.warnings] == [str(w) for w in serial.warnings]


def test_excludes_carry_their_reason_and_renames_apply(tree):
    src, out = tree
    (src / "cuda").mkdir()
    (src / "cuda" / "cuda_util.cuh").write_text('#include "cuda/cuda_helpers.h"\ncudaError_t f();\n')
    settings = HipifySettings(exclude=(Exclude("cudnn_*", "no MIOpen port yet"),), renames=(Rename("cuda", "rocm"),))
    report = hipify_tree(settings, src, out, jobs=1)
    assert report.excluded == [("cudnn_conv.cc", "no MIOpen port yet")]
    assert not (out / "cudnn_conv.cc").exists()
    assert (out / "rocm" / "rocm_util.cuh").read_text() == '#include "rocm/rocm_helpers.h"\nhipError_t f();\n'


def test_output_inside_source_and_colliding_outputs_are_errors(tree):
    src, _ = tree
    with pytest.raises(ToolkitError, match="inside the source tree"):
        hipify_tree(HipifySettings(), src, src / "out")
    (src / "a.cu").write_text("")
    (src / "a.hip").write_text("")
    with pytest.raises(ToolkitError,
                       match=r"a\.cu and a\.hip would both be written to a\.hip|a\.hip and a\.cu would both"):
        hipify_tree(HipifySettings(include=("**/*.cu", "**/*.hip"), suffixes=((".cu", ".hip"),)), src, src.parent / "o")


def test_strict_setting_raises_with_file_and_line(tree):
    src, out = tree
    with pytest.raises(ToolkitError) as info:
        hipify_tree(HipifySettings(strict=True), src, out, jobs=1)
    text = str(info.value)
    assert "4 CUDA identifier(s) left unmapped" in text
    assert "unmapped_example.cu:7: unmapped 'cudaGraphInstantiateWithParams'" in text
    assert json.loads((out / CACHE_NAME).read_text())["files"]  # outputs and cache were still written


def test_cli_lists_unmapped_and_strict_exits_1(tree, capsys):
    src, out = tree
    assert main(["hipify", str(src), str(out), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "unmapped_example.cu:10: unmapped 'CUDART_VERSION'" in printed
    assert "warp_reduce.cuh:10: shfl-width" in printed
    assert main(["hipify", str(src), str(out), "--strict"]) == 1
    printed = capsys.readouterr()
    assert printed.out.startswith("22 files: 0 converted, 20 unchanged")
    assert printed.err == "error: 4 CUDA identifier(s) left unmapped (--strict)\n"
    (src / "unmapped_example.cu").unlink()
    assert main(["hipify", str(src), str(out), "--strict"]) == 0


def test_cli_quiet_prints_errors_only(tree, capsys, monkeypatch):
    monkeypatch.setattr(log, "_quiet", log.is_quiet())  # main() sets it for the process: put it back after
    src, out = tree
    assert main(["-q", "hipify", str(src), str(out), "--jobs", "1"]) == 0
    assert capsys.readouterr() == ("", "")  # no summary, unmapped names, warnings or progress
    assert main(["hipify", str(src), str(out), "--strict", "-q"]) == 1
    printed = capsys.readouterr()
    assert printed.out == ""
    lines = printed.err.splitlines()
    assert lines[-1] == "error: 4 CUDA identifier(s) left unmapped (--strict)"
    assert len(lines) == 5 and all(": unmapped '" in line for line in lines[:-1]), lines
    assert "unmapped_example.cu:10: unmapped 'CUDART_VERSION'" in printed.err


def test_cli_hipify_alone_parses_as_the_whole_parser_does(tree):
    # `python -m toolkit hipify` registers only its own command (start-up): the arguments must read the same.
    src, out = tree
    argv = ["-q", "hipify", str(src), str(out), "--jobs", "3", "--launch-syntax", "hipLaunchKernelGGL",
            "--dnn", "hipdnn", "--strict", "--no-warnings"]
    whole, alone = vars(build_parser().parse_args(argv)), vars(build_parser("hipify").parse_args(argv))
    assert whole == alone and alone["jobs"] == 3 and alone["dnn"] == "hipdnn"


def test_hipify_perl_missing_is_a_clear_error(tree):
    src, out = tree
    settings = HipifySettings(engine="hipify-perl", hipify_perl="/nonexistent/hipify-perl")
    with pytest.raises(ToolkitError, match="'/nonexistent/hipify-perl' was not found"):
        hipify_tree(settings, src, out)


def _stand_in(tmp_path: Path, body: str) -> str:
    # A stand-in for ROCm's hipify-perl (absent from Debian): these tests are about how the
    # toolkit treats its exit status, stdout and stderr, not about its conversions.
    script = tmp_path / "hipify-perl"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


def _recording_stand_in(tmp_path: Path) -> tuple[str, Path]:
    """A stand-in that converts like a tiny hipify-perl, warns unless given -quiet-warnings as hipify-perl does,
    and appends each call's arguments to a file: (its path, that file)."""
    calls = tmp_path / "calls"
    body = (f'echo "$@" >> {calls}\nfor last; do :; done\nsed "s/cudaMalloc/hipMalloc/g" "$last"\n'
            '[ "$1" = "-quiet-warnings" ] || echo "warning: $last:#3 : unsupported device function" >&2\n')
    return _stand_in(tmp_path, body), calls


def test_hipify_perl_failure_is_surfaced(tree, tmp_path):
    src, out = tree
    perl = _stand_in(tmp_path, 'echo "error: cannot parse $1" >&2\nexit 3\n')
    with pytest.raises(ToolkitError, match=r"hipify-perl on \S+ failed \(exit 3\): `.+`\n  error: cannot parse"):
        hipify_tree(HipifySettings(engine="hipify-perl", hipify_perl=perl), src, out, jobs=1)


def test_hipify_perl_output_is_checked_for_leftovers(tree, tmp_path):
    src, out = tree
    perl = _stand_in(tmp_path, 'sed "s/cudaMalloc/hipMalloc/g" "$1"\n'
                               'echo "warning: $1:#3 : unsupported device function" >&2\n')
    report = hipify_tree(HipifySettings(engine="hipify-perl", hipify_perl=perl), src, out, jobs=1)
    assert "hipMalloc(reinterpret_cast" in (out / "runtime_memcpy.cu").read_text()
    names = {u.name for u in report.unmapped if u.file == "runtime_memcpy.cu"}
    assert "cudaMemcpyAsync" in names and "cudaMalloc" not in names
    assert any(w.kind == "hipify-perl" and w.line == 3 for w in report.warnings)


def test_pipeline_stage_reruns_when_the_engine_tables_change(tmp_path, monkeypatch):
    # A corrected mapping must reach a work tree hipified before it (seen: the LRN mode fix was skipped).
    from types import SimpleNamespace

    from toolkit.pipeline.adapters.hipify import hipify_stage

    build = SimpleNamespace(hipify=HipifySettings(),
                            workspace=SimpleNamespace(source=tmp_path / "src", hipified=tmp_path / "out"),
                            options=SimpleNamespace(jobs=1))
    stage = hipify_stage(build)
    before = stage.inputs()
    assert before == stage.inputs()
    monkeypatch.setattr("toolkit.hipify.tree.tables_digest", lambda *args, **kwargs: "another table set")
    assert stage.inputs() != before


def test_only_units_converts_those_units_and_every_header(tree):
    # A sample's compile check: its own units and every header, the other units left unconverted.
    src, out = tree
    (src / "shared.cuh").write_text("#include <cuda_runtime.h>\n"
                                    "__device__ inline float twice(float x) { return 2 * x; }\n")
    full = HipifySettings()
    units = sorted(p.name for p in src.glob("*.cu"))
    assert len(units) >= 3
    keep = units[0]
    inputs = [p.relative_to(src).as_posix() for p in src.rglob("*") if full.included(p.relative_to(src).as_posix())]
    report = hipify_tree(replace(full, only_units=(keep,), unit_globs=("**/*.cu",)), src, out, jobs=1)
    assert sorted(report.converted) == sorted(r for r in inputs if not r.endswith(".cu") or r == keep)
    assert "shared.cuh" in report.converted
    assert sorted(p.name for p in out.glob("*.cu")) == [keep]
    assert "hip/hip_runtime.h" in (out / "shared.cuh").read_text()
    # The same bytes as a full run's: the selection is no part of a file's cache key.
    assert full.digest() == replace(full, only_units=(keep,), unit_globs=("**/*.cu",)).digest()


def test_a_projects_own_device_header_is_not_taken_for_cudas(tmp_path, capsys):
    """CUDA's device_types.h has no HIP header; a project's device_memory.h is its own (the
    bundled sample has one): hipify on the sample alone leaves nothing unmapped."""
    sample = Path(__file__).resolve().parents[2] / "samples" / "umbrella-ep"
    assert main(["hipify", str(sample), str(tmp_path / "out"), "--strict", "--jobs", "1"]) == 0
    assert "; 0 unmapped," in capsys.readouterr().out
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text('#include <device_types.h>\n#include "device_memory.h"\n')
    assert main(["hipify", str(tmp_path / "src"), str(tmp_path / "out2"), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "k.cu:1: unmapped 'device_types.h': no HIP header known" in printed
    assert "device_memory.h'" not in printed


def test_hipify_perl_outputs_are_kept_by_content_for_another_work_tree(tree, tmp_path):
    src, out = tree
    (perl, calls), kept = _recording_stand_in(tmp_path), tmp_path / "kept"
    settings = HipifySettings(engine="hipify-perl", hipify_perl=perl)
    first = hipify_tree(settings, src, out, jobs=1, perl_cache=kept)
    ran = len(calls.read_text().splitlines())
    assert ran == len(first.converted) > 0
    # A second work tree of the same sources: nothing runs, the same bytes and findings come out.
    other = tmp_path / "other"
    second = hipify_tree(settings, src, other, jobs=1, perl_cache=kept)
    assert len(calls.read_text().splitlines()) == ran
    assert (other / "runtime_memcpy.cu").read_bytes() == (out / "runtime_memcpy.cu").read_bytes()
    findings = [[(w.file, w.line, w.message) for w in report.warnings] for report in (first, second)]
    assert findings[0] == findings[1]
    assert any(w.kind == "hipify-perl" and w.line == 3 for w in second.warnings)
    # Another hipify-perl (its content changed) runs again.
    Path(perl).write_text(Path(perl).read_text() + "# another release\n")
    hipify_tree(settings, src, tmp_path / "third", jobs=1, perl_cache=kept)
    assert len(calls.read_text().splitlines()) == 2 * ran


def test_a_failed_hipify_perl_run_is_not_kept(tree, tmp_path):
    src, out = tree
    perl, kept = _stand_in(tmp_path, 'echo "error: cannot parse $1" >&2\nexit 3\n'), tmp_path / "kept"
    with pytest.raises(ToolkitError, match="failed"):
        hipify_tree(HipifySettings(engine="hipify-perl", hipify_perl=perl), src, out, jobs=1, perl_cache=kept)
    assert not kept.exists() or not any(kept.rglob("*.json"))


def test_perl_warnings_off_runs_hipify_perl_quiet_and_keeps_apart(tree, tmp_path):
    src, out = tree
    (perl, calls), kept = _recording_stand_in(tmp_path), tmp_path / "kept"
    loud = hipify_tree(HipifySettings(engine="hipify-perl", hipify_perl=perl), src, out, jobs=1, perl_cache=kept)
    quiet = hipify_tree(HipifySettings(engine="hipify-perl", hipify_perl=perl, perl_warnings=False), src,
                        tmp_path / "quiet", jobs=1, perl_cache=kept)
    lines = calls.read_text().splitlines()
    assert len(lines) == 2 * len(loud.converted)   # kept apart: the quiet run is not served the loud one's output
    assert sum(line.startswith("-quiet-warnings ") for line in lines) == len(quiet.converted)
    assert any(w.kind == "hipify-perl" for w in loud.warnings)
    assert not any(w.kind == "hipify-perl" for w in quiet.warnings)
    assert (tmp_path / "quiet" / "runtime_memcpy.cu").read_bytes() == (out / "runtime_memcpy.cu").read_bytes()


def test_perl_warnings_is_read_from_the_recipe(tmp_path):
    from toolkit.util.tomlclass import read
    from toolkit.util.tomlread import Table

    table = Table({"engine": "hipify-perl", "perl_warnings": False}, tmp_path / "r.toml", "hipify")
    assert read(HipifySettings, table).perl_warnings is False
    with pytest.raises(ToolkitError, match="perl_warnings"):
        read(HipifySettings, Table({"perl_warnings": "no"}, tmp_path / "r.toml", "hipify"))


REDUCE = """#include <cuda_runtime.h>

__global__ void reduce(float* x) {
  float v = x[threadIdx.x];
  // sum the warp
  for (int o = 16; o > 0; o /= 2) {
    unsigned mask = 0xffffffffu;
    v += __shfl_down_sync(mask, v, o);
  }
  x[threadIdx.x] = v;
}
"""


def test_hipify_perl_findings_name_the_source_line_and_a_fix_it_reads(tmp_path):
    """hipify-perl puts `#include "hip/hip_runtime.h"` above the file (as ROCm's does) and leaves
    __shfl_down_sync: the finding names line 8, where the source has it, and the strict error's hint does not
    send the user to the built-in engine's tables, which hipify-perl never reads."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "reduce.cu").write_text(REDUCE)
    perl = _stand_in(tmp_path, "printf '#include \"hip/hip_runtime.h\"\\n'\n"
                               "sed 's#cuda_runtime.h#hip/hip_runtime.h#' \"$1\"\n")
    report = hipify_tree(HipifySettings(engine="hipify-perl", hipify_perl=perl), src, tmp_path / "out", jobs=1)
    assert (tmp_path / "out" / "reduce.cu").read_text().splitlines()[8] == "    v += __shfl_down_sync(mask, v, o);"
    found = [str(u) for u in report.unmapped if u.name == "__shfl_down_sync"]
    assert found and all(line.startswith("reduce.cu:8: unmapped '__shfl_down_sync'") for line in found), found
    with pytest.raises(ToolkitError) as strict:
        report.check_strict()
    assert "toolkit/hipify/tables" not in str(strict.value.hint)
    assert "[[hipify.substitute]]" in str(strict.value.hint) and "hipify-perl does not read" in str(strict.value.hint)
