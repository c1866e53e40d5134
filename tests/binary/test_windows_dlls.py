"""What a Windows DLL may import (toolkit/binary/windows.py), judged on the facts pefile reads."""

from __future__ import annotations

from toolkit.binary.pe import PeFacts
from toolkit.binary.windows import describe_imports, import_problems, reproducibility_problems

UCRT = ("api-ms-win-crt-heap-l1-1-0.dll", "api-ms-win-crt-runtime-l1-1-0.dll")


def facts(*imports: str, timestamp: int = 0, debug: int = 0) -> PeFacts:
    return PeFacts(("CreateEpFactories", "ReleaseEpFactory"), imports, timestamp, debug, "x86_64")


def test_windows_own_dlls_and_the_ucrt_and_what_is_built_beside_it_are_allowed() -> None:
    assert import_problems(facts("KERNEL32.dll", *UCRT, "migraphx-backend.dll"), ["migraphx-backend.dll"]) == []
    # Names compare as Windows compares them, without case.
    assert import_problems(facts("kernel32.DLL", "DIRECTML.dll"), ["DirectML.dll"]) == []


def test_mingw_runtime_legacy_crt_and_unknown_dlls_are_each_named_with_what_to_do() -> None:
    problems = import_problems(facts("KERNEL32.dll", "libstdc++-6.dll", "msvcrt.dll", "libprotobuf.dll"), [])
    assert problems == [
        "libstdc++-6.dll (MinGW's runtime DLL: link it in statically, -static)",
        "msvcrt.dll (the legacy CRT: something was built for MSVCRT, not UCRT)",
        "libprotobuf.dll (neither Windows' own, nor built beside it, nor carried by its wheel)",
    ]


def test_a_link_time_or_a_debug_directory_makes_builds_differ() -> None:
    assert reproducibility_problems(facts("KERNEL32.dll")) == []
    assert reproducibility_problems(facts(timestamp=1764403200, debug=1)) == [
        "its header carries a link time (1764403200): link with -Wl,--no-insert-timestamp",
        "it has 1 debug directory entr(ies), which carry a time and a .pdb path",
    ]


def test_the_ucrt_sets_are_counted_in_the_log_line() -> None:
    assert describe_imports(("KERNEL32.dll", *UCRT)) == "KERNEL32.dll, the UCRT (2 api-ms-win-crt-* sets)"
    assert describe_imports(()) == "nothing"
