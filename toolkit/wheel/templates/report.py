"""The self-check's report: `python -m <package>` prints what the wheel is, what it needs and what is here, what to
do about each missing piece, then one verdict line; exit 0 only when the EP offers a device here.

Shipped in every wheel the ort-amdgpu toolkit makes (as `_report.py`); standard library only. The facts are
`_selfcheck.check()`'s, what to do about them `_advice.py`'s.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import Any

from ._selfcheck import AMD_VENDOR, HERE, check


def _join(values: Iterable[str]) -> str:
    values = list(values)
    return ", ".join(values) if values else "none"


def _linked_line(lib: dict[str, Any]) -> str:
    state = (f"found {lib['path']} ({lib['how']})" if lib["found"] else
             "NOT FOUND" + (f" (present in {_join(lib['elsewhere'])}, not on the loader's path)"
                            if lib["elsewhere"] else ""))
    load = "loads" if lib["loads"] else f"does not load: {lib['error']}"
    return f"  {lib['soname']} (needed by {_join(lib['needed_by'])}): {state}; {load}"


def _symbol_versions_line(needs: dict[str, str], here: dict[str, Any]) -> str:
    """The symbol versions the build recorded (the oldest glibc and libstdc++ it loads with), beside this machine's."""
    wants = ", ".join(f"{family}_{version}" for family, version in needs.items()) or "not recorded"
    has = f"glibc {here.get('glibc') or 'unknown'}, libstdc++ " + \
        (f"GLIBCXX_{here['glibcxx']}" if here.get("glibcxx") else "not found")
    return f"  symbol versions it needs: {wants} at most (this machine: {has})"


def _runtime_line(lib: dict[str, Any]) -> str:
    """A library a backend loads at run time: where it was found, whether it loads, what its own wheel says of it."""
    if not lib["found"]:
        return f"  {lib['name']} (loaded at run time by {lib['needed_by']}): NOT FOUND"
    wheel = lib.get("wheel") or {}
    state = f"found {lib['path']} ({lib['how']}); " + (f"does not load: {lib['error']}" if lib.get("loads") is False
                                                       else "loads")
    state += f"; from {wheel['distribution']}" if wheel.get("distribution") else ""
    state += "".join(f" (TEST BUILD: {name}: {why})" for name, why in sorted((wheel.get("test_build") or {}).items()))
    return f"  {lib['name']} (loaded at run time by {lib['needed_by']}): {state}"


def report_lines(facts: dict[str, Any]) -> list[str]:
    b = facts["build"]
    toolchain = b.get("toolchain") or {}
    lines = [f"{facts['distribution']} {facts['version']} (ROCm variant: {facts['variant'] or 'none'}) "
             f"in {facts['package_dir']}",
             f"build: upstream commit {b.get('upstream_commit') or 'unknown'}; source {b.get('source_revision')}",
             f"  patches: {_join(b.get('patches', []))}",
             f"  features: {_join(b.get('features', []))}"
             + "".join(f" (TEST BUILD: {name}: {why})" for name, why in sorted(facts.get("test_build", {}).items())),
             f"  toolchain: {toolchain.get('name', 'not recorded')}"
             + (f", glibc floor {toolchain['glibc_floor']}" if toolchain.get("glibc_floor") else ""),
             f"  built against: {b.get('rocm_version') or 'no ROCm (no HIP headers)'}"]
    windows = (facts.get("system") or {}).get("id") == "windows"
    if not windows:  # a DLL versions no symbol that way
        lines.append(_symbol_versions_line(b.get("symbol_versions") or {}, facts.get("c_runtime") or {}))
    lines.append("ROCm libraries it links:" + ("" if facts["rocm_libraries"] else " none"))
    lines += [_linked_line(lib) for lib in facts["rocm_libraries"]]
    # Not ROCm, and not bundled either: this machine provides it.
    external = facts.get("external_libraries") or []
    if external:
        lines.append("other libraries it links, left external (not ROCm; this machine provides them):")
    lines += [_linked_line(lib) for lib in external]
    if facts["runtime_libraries"]:
        lines.append("libraries its backends load at run time:")
    lines += [_runtime_line(lib) for lib in facts["runtime_libraries"]]
    lines.append(f"system: {(facts.get('system') or {}).get('name') or 'unknown (no /etc/os-release)'}")
    lines.append(_gpus_line(facts["gpus"]))
    ort = facts["onnxruntime"]
    lines.append(f"onnxruntime: {_join(ort['distributions']) if ort['distributions'] else 'not installed'}"
                 f"; supported {ort['supported']}: {'yes' if ort['in_range'] else 'no'}")
    lines.append("packaged libraries:")
    for lib in facts["libraries"]:
        # A component that is no plugin EP (hip-ep's libhip-compiler.so, a compiler) is no backend either.
        what = f"EP {lib['ep_name']}" if lib["ep_name"] else "backend" if lib.get("plugin", True) else \
            "a library the EP loads, not an EP"
        state = "loads" if lib["loads"] else f"does not load: {lib['error']}"
        state += "".join(f"; its {dll['dll']} is {dll['bound_to'] or 'unknown'}"
                         + (" (the wheel's copy)" if dll["is_wheel_copy"] else ", NOT the wheel's copy")
                         for dll in lib.get("carried_imports") or [])
        lines.append(f"  {lib['file']} ({what}): {state}" + (f"; needs {lib['runtime']}" if lib["runtime"] else ""))
    reg = facts["registration"]
    devices = _join(f"{d['type']} {d['vendor']} vendor_id={d['vendor_id']} device_id={d['device_id']}"
                    for d in reg["devices"])
    state = (f"failed: {reg['error']}" if reg["error"] else f"not tried: {reg['skipped']}" if reg.get("skipped")
             else f"registered{' already, in this process' if reg.get('already_registered') else ''}, "
                  f"{len(reg['devices'])} device(s): {devices}")
    lines.append(f"ORT registration of {facts['ep_name']}: {state}")
    lines += no_device_lines(facts)
    lines += [f"  the EP said: {line}" for line in reg["log"]]
    if facts["todo"]:
        lines.append("what to do:")
        lines += [f"  - {p['what']}{'' if p['blocking'] else ' (optional)'}: {p['do']}" for p in facts["todo"]]
    return lines


def _gpus_line(gpu: dict[str, Any]) -> str:
    """The kernel's view (Linux: /dev/kfd and the render nodes), or DXGI's adapters (Windows)."""
    if "adapters" in gpu:
        adapters = "unknown (DXGI could not be asked)" if gpu["adapters"] is None else _join(
            f"{a['description']} vendor {a['vendor']} device {a['device']}" + (" (software)" if a["software"] else "")
            for a in gpu["adapters"])
        return f"GPUs (DirectX adapters): {adapters}; AMD ({AMD_VENDOR}): {len(gpu['amd'])}"
    nodes = _join(f"{n['node']} vendor {n['vendor']} device {n['device']}" for n in gpu["render_nodes"])
    return (f"GPUs: /dev/kfd {'present' if gpu['kfd'] else 'absent'}; render nodes: {nodes}; "
            f"AMD ({AMD_VENDOR}): {len(gpu['amd'])}")


def no_device_lines(facts: dict[str, Any]) -> list[str]:
    """Beside a registration with zero devices: why (the recipe's [wheel.no_device]), and what turns one on."""
    reg, said = facts["registration"], facts.get("no_device")
    if not said or reg["devices"] or reg["error"] or not reg.get("attempted", True):
        return []
    turns_on = " ".join(f"{name}={value}" for name, value in said["env"].items())
    set_here = "set here, yet it offers none" if all(said.get("set", {}).values()) else "not set here"
    return [f"  why no device: {said['why']}; {turns_on} turns on {said['enables']} ({set_here})"]


def main(argv: list[str] | None = None) -> int:
    import argparse

    package = os.path.basename(HERE)
    parser = argparse.ArgumentParser(
        prog=f"python -m {package}", allow_abbrev=False,
        description="Check that this machine can run the EP: what the wheel needs, what is here, and what to do "
                    "about what is missing. Exit 0 when the EP offers a device here, 1 otherwise.")
    parser.add_argument("--json", action="store_true", help="print the facts as JSON (the verdict is in them)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print the verdict line alone")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)  # --help exits 0, a bad option 2
    facts = check()
    if args.json:
        print(json.dumps(facts, indent=2, sort_keys=True), flush=True)
        return 0 if facts["ready"] else 1
    if not args.quiet:
        print("\n".join(report_lines(facts)))
    if facts["ready"]:
        count = len(facts["registration"]["devices"])
        optional = [p for p in facts["todo"] if not p["blocking"]]
        note = f" (without {optional[0]['what']}: {optional[0]['do']})" if optional else ""
        print(f"ready: {facts['ep_name']} offers {count} device(s) here{note}", flush=True)
        return 0
    print(f"not ready: {facts['missing']}", flush=True)
    return 1
