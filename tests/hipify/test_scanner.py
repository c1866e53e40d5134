"""The converter's scanner steps over all but CUDA-looking words inside one regex match: what it must still see,
what it must still step over whole, and the scan prefixes that decide which words it shows."""

from __future__ import annotations

import json
import re
import shutil
import textwrap

import pytest

from toolkit.hipify.engine import convert_text
from toolkit.hipify.tables import DETECT_FILE, TABLES_DIR, load_tables
from toolkit.recipe.hipify import HipifySettings
from toolkit.util.errors import ToolkitError


def convert(src: str, **kw):
    settings = HipifySettings(**kw)
    return convert_text(textwrap.dedent(src), "f.cu", settings, load_tables(settings.options()))


def test_literals_numbers_and_comments_are_stepped_over_whole():
    r = convert('''\
        int n = 1'000'000 + cudaMallocCount; char q = '"'; cudaFree(p);
        auto s = u8"cudaMalloc(a)"; auto w = L'c'; auto r = LR"d(cudaFree)d"; cudaMalloc(&p, 1);
        // a comment \\
        cudaFree(still_comment);
        /* cudaFree */ float f = 1.5e+3f; unsigned m = 0xcuLL; cudaDeviceSynchronize();
        ''')
    assert r.text.splitlines() == [
        "int n = 1'000'000 + cudaMallocCount; char q = '\"'; hipFree(p);",
        'auto s = u8"cudaMalloc(a)"; auto w = L\'c\'; auto r = LR"d(cudaFree)d"; hipMalloc(&p, 1);',
        "// a comment \\",
        "cudaFree(still_comment);",
        "/* cudaFree */ float f = 1.5e+3f; unsigned m = 0xcuLL; hipDeviceSynchronize();",
    ]
    assert [(f.line, f.name) for f in r.unmapped] == [(1, "cudaMallocCount")]


def test_an_unterminated_quote_does_not_end_the_scan():
    r = convert('''\
        #error don't build this with nvcc
        cudaMalloc(&p, 1); x = mycudaFree + cuda_helper;
        ''')
    assert r.text.splitlines()[1] == "hipMalloc(&p, 1); x = mycudaFree + cuda_helper;"


def test_directives_only_at_the_start_of_a_line():
    r = convert('''\
          #  include <cuda_runtime.h>
        #define STR(x) #x cudaStream_t
        #define CAT(a) a##cudaEvent_t
        ''')
    assert r.text.splitlines() == [
        "  #  include <hip/hip_runtime.h>",
        "#define STR(x) #x hipStream_t",
        "#define CAT(a) a##hipEvent_t",
    ]


def test_names_declared_after_a_type_keyword_are_the_files_own():
    r = convert('''\
        struct cudaHelper final : Base {};
        enum class cudaMode : int { A };
        cudaUnknownThing(1);
        ''')
    assert [f.name for f in r.unmapped] == ["cudaUnknownThing"]
    assert {"cudaHelper", "cudaMode"} <= set(r.defines)


def test_a_name_twice_on_one_line_is_one_finding():
    # ORT's `#if defined(CUDA_VERSION) && CUDA_VERSION >= 11080` printed every finding twice.
    r = convert('''\
        #if defined(CUDA_VERSION) && CUDA_VERSION >= 11080
        #endif
        int v = CUDA_VERSION;
        ''')
    assert [(f.line, f.name) for f in r.unmapped] == [(1, "CUDA_VERSION"), (3, "CUDA_VERSION")]


# One name per identifier pattern of _detect.json: a new pattern needs its example here, so that the
# scanner's prefixes are checked against it.
DETECT_EXAMPLES = ["cudaFooBar", "curand_foo", "cuFoo", "CUDA_FOO", "__nv_foo", "__NV_FOO", "__CUDA_FOO",
                   "__CUDACC_FOO", "__foo_sync", "__activemask", "__syncwarp", "nvtxFoo", "NCCL_FOO",
                   "cublasLtFoo", "nvrtcFoo", "nvjpegFoo"]


def test_every_cuda_looking_name_starts_with_a_scan_prefix():
    detect = json.loads((TABLES_DIR / DETECT_FILE).read_text())
    prefixes = tuple(detect["scan_prefixes"])
    for pattern in detect["identifier_patterns"]:
        assert any(re.match(pattern, name) for name in DETECT_EXAMPLES), f"no example for {pattern}"
    for name in DETECT_EXAMPLES:
        assert name.startswith(prefixes), name
        # and the scanner shows it: mapped by a table, or reported as unmapped
        r = convert(f"x = {name} + 1;\n")
        assert r.text != f"x = {name} + 1;\n" or [f.name for f in r.unmapped] == [name], name


def test_a_table_name_outside_the_scan_prefixes_is_an_error(tmp_path):
    shutil.copy(TABLES_DIR / DETECT_FILE, tmp_path)
    (tmp_path / "a.json").write_text(json.dumps({"identifiers": {"rtxFoo": "hipFoo"}}))
    with pytest.raises(ToolkitError, match=r"a\.json: 'rtxFoo' starts with none of the scan prefixes of _detect"):
        load_tables({}, tmp_path)
