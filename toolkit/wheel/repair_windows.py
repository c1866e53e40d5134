"""Repair a win_amd64 wheel with delvewheel (the tool cibuildwheel uses for Windows), then check what it does not.

delvewheel reads the DLLs with pefile and runs on Linux: with --analyze-existing it looks at the DLLs already in
the wheel, and vendors every DLL they import that Windows does not have. A plugin EP built by the mingw toolchain
links MinGW's runtime in and imports only Windows' own DLLs, so delvewheel has nothing to vendor; a DLL the wheel
carries on purpose (DirectML.dll, beside the backend that loads it) is left where it is. After it, every DLL in
the wheel must import only Windows' own DLLs and the DLLs beside it. A failed check leaves nothing in `out_dir`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from toolkit.binary.pe import read_pe
from toolkit.binary.windows import REASONS, classify_import, import_problems
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import give_umask_mode
from toolkit.util.process import run
from toolkit.wheel.licenses import license_problems
from toolkit.wheel.repair import RepairResult
from toolkit.wheel.wheelfile import parse_wheel_filename


def dll_members(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return sorted(n for n in archive.namelist() if n.lower().endswith(".dll"))


def repair_windows_wheel(wheel: Path, out_dir: Path, env: Mapping[str, str] | None = None,
                         built: Iterable[str] | None = None, provided: Iterable[str] = ()) -> RepairResult:
    """Repair `wheel` (tagged win_*) into `out_dir` with delvewheel; the DLLs the wheel already carries stay. `built`:
    the names of the DLLs its tree built; every other DLL in it (DirectML.dll) must come with its license.
    `provided`: DLLs every process that loads the wheel's DLLs has loaded already (the recipe's [[outputs]] needs
    that the tree does not build)."""
    provided = tuple(provided)
    wheel, out_dir = Path(wheel), Path(out_dir)
    if not wheel.is_file():
        raise ToolkitError(f"{wheel}: wheel not found", "run the wheel stage first")
    tags = parse_wheel_filename(wheel.name).platform_tags
    if not all(tag.startswith("win_") for tag in tags):
        raise ToolkitError(f"{wheel.name}: a Windows repair takes a win_* wheel, not {', '.join(tags)}")
    before = dll_members(wheel)
    _refuse_what_no_repair_fixes(wheel, provided)
    # What the wheel carries is its own, where it is: delvewheel must neither vendor nor move it. Nor may it look for
    # Windows' own DLLs (its list lacks d3d12.dll) or the process's.
    kept = sorted({m.rsplit("/", 1)[-1] for m in before} | set(_not_to_vendor(wheel, provided)))
    carried = ["--exclude=" + ":".join(kept)] if kept else []
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".repair-", dir=out_dir) as tmp:
        produced = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "delvewheel", "repair", "--analyze-existing", "--no-mangle-all", *carried,
               "-w", str(produced), str(wheel)]
        run(cmd, "delvewheel repair", output="merge", env={**os.environ, **(env or {})},
            hint="pip install delvewheel (the toolkit's environment has it)")
        repaired = sorted(produced.glob("*.whl"))
        if len(repaired) != 1:
            raise ToolkitError(f"delvewheel wrote {len(repaired)} wheels into {produced}, expected one")
        problems = wheel_import_problems(repaired[0], provided=provided)
        if built is not None:
            ours = {name.lower() for name in built}
            carried = [m for m in dll_members(repaired[0]) if m.rsplit("/", 1)[-1].lower() not in ours]
            problems += license_problems(repaired[0], carried)
        if problems:
            lines = "\n".join(f"  {p}" for p in problems)
            raise ToolkitError(f"repaired wheel {repaired[0].name} fails its checks:\n{lines}",
                               "link MinGW's runtime in (-static), carry every other DLL beside the one that imports "
                               "it, and ship a carried DLL's license in .dist-info/licenses/bundled/<its name>/")
        after = dll_members(repaired[0])
        vendored = tuple(m for m in after if m not in before)
        final = out_dir / repaired[0].name
        give_umask_mode(repaired[0])
        os.replace(repaired[0], final)
    platform_tags = parse_wheel_filename(final.name).platform_tags
    log.stage("repair", f"{final.name}: tag {platform_tags[0]} (the toolchain's target), delvewheel vendored "
                        f"{len(vendored)} DLL(s){': ' + ', '.join(vendored) if vendored else ''}; every DLL imports "
                        "only Windows' own DLLs and the ones beside it")
    return RepairResult(final, platform_tags[0], platform_tags, vendored, ())


def _refuse_what_no_repair_fixes(wheel: Path, provided: tuple[str, ...]) -> None:
    """MinGW's runtime DLLs and the legacy CRT are build mistakes, not dependencies to vendor, and a DLL no one
    provides cannot be vendored from this Linux machine: each named before delvewheel runs (it would stop at the
    first one it cannot find, with a traceback)."""
    problems = wheel_import_problems(wheel, kinds=("mingw_runtime", "legacy_crt"))
    if problems:
        raise ToolkitError(f"{wheel.name}: " + "; ".join(problems),
                           hint="a plugin EP DLL loads in any process with ONNX Runtime, where no MinGW runtime is "
                                "found: link it in (the mingw toolchain's -static)")
    problems = wheel_import_problems(wheel, kinds=("unknown",), provided=provided)
    if problems:
        raise ToolkitError(f"{wheel.name}: " + "; ".join(problems),
                           hint="carry the DLL beside the one that imports it, or, where every process that loads "
                                "the EP has it, name it in the recipe's [[outputs]] needs; not onnxruntime.dll, which "
                                "a Python process has none of (PyPI's onnxruntime links ORT into its extension "
                                "module): an EP takes ORT's API from the OrtApiBase CreateEpFactories receives")


def _not_to_vendor(wheel: Path, provided: tuple[str, ...]) -> list[str]:
    """The imports of the wheel's DLLs that are Windows' own or the process's."""
    with tempfile.TemporaryDirectory(prefix=".repair-check-") as tmp, zipfile.ZipFile(wheel) as archive:
        dlls = [Path(archive.extract(member, tmp)) for member in dll_members(wheel)]
        imports = {name for dll in dlls for name in read_pe(dll).imports}
    return [name for name in imports if classify_import(name, provided) is None]


def wheel_import_problems(wheel: Path, kinds: tuple[str, ...] = tuple(REASONS), provided: tuple[str, ...] = ()
                          ) -> list[str]:
    """`MEMBER: imports ...` for each DLL of the wheel that imports what it may not (of the given kinds), the DLLs
    the wheel carries and those the process provides being its own."""
    members = dll_members(wheel)
    own = [m.rsplit("/", 1)[-1] for m in members] + list(provided)
    problems = []
    with tempfile.TemporaryDirectory(prefix=".repair-check-") as tmp, zipfile.ZipFile(wheel) as archive:
        for member in members:
            wrong = import_problems(read_pe(Path(archive.extract(member, tmp))), own, kinds)
            problems += [f"{member}: imports {'; '.join(wrong)}"] if wrong else []
    return problems
