"""What is missing for the EP to run here, and what to do about each piece: the self-check's advice.

Shipped in every wheel the ort-amdgpu toolkit makes (as `_advice.py`, beside `_selfcheck.py`, which gathers the
facts this reads). Standard library only, and no import of its own: a pure function of the facts and of the
wheel's `_wheel_info.json`, where the build recorded which package provides each library the wheel links or
loads, the ONNX Runtime distributions to name, and the variable that makes this EP say what it does.

Each piece is {"what", "do", "blocking"}; the self-check's verdict is the first blocking one. A piece that only
costs a backend (a library the hip backend loads at run time) is not blocking: the EP runs without it.
"""

from __future__ import annotations

import re
from typing import Any

AMD_VENDOR = "0x1002"


def _piece(what: str, do: str, blocking: bool = True) -> dict[str, Any]:
    return {"what": what, "do": do, "blocking": blocking}


def _rocm_name(info: dict[str, Any]) -> str:
    variant = info.get("rocm_variant")
    return f"ROCm {variant.removeprefix('rocm')}" if variant else "ROCm"


def variant_choices(info: dict[str, Any]) -> list[tuple[str, str]]:
    """(variant, the pip command that installs it) for every ROCm variant of this wheel's family. A build with a
    named feature (`-hipdnn`) installs by its own name for every variant: the meta-package installs the plain one."""
    base, default, suffix = info.get("meta_distribution"), info.get("default_variant"), info.get("feature_suffix")

    def name(variant: str) -> str:
        parts = (base,) if variant == default and not suffix else (base, variant, suffix)
        return "-".join(str(p) for p in parts if p)
    return [(v, f"pip install {name(v)}") for v in sorted(info.get("rocm_variants") or {})]


def _other_variants(info: dict[str, Any], soname: str) -> str:
    """'; for ROCm 7 instead: pip uninstall ..., then pip install ...' when the soname is the variant's HIP."""
    variants, ours = info.get("rocm_variants") or {}, info.get("rocm_variant")
    if not ours or variants.get(ours) != soname:
        return ""
    # The meta-package installs the plain build only: a named feature's build came without it.
    meta = None if info.get("feature_suffix") else info.get("meta_distribution")
    remove = " ".join(sorted({info["distribution"], meta or info["distribution"]}))
    others = [f"for ROCm {v.removeprefix('rocm')} instead: pip uninstall {remove}, then {command}"
              for v, command in variant_choices(info) if v != ours]
    return "".join(f"; {text}" for text in others)


def debian_suite(system: dict[str, Any] | None) -> str | None:
    """The Debian suite this machine runs (from /etc/os-release): its codename, or sid for unstable and testing,
    whose os-release has no VERSION_ID; None elsewhere (Ubuntu, Fedora, ...)."""
    if not system or system.get("id") != "debian":
        return None
    return system.get("codename") if system.get("version_id") else "sid"


def install_words(source: Any, system: dict[str, Any] | None) -> str:
    """What to install for a library, for this machine: the Debian package only where its distribution has it (the
    suites the wheel's data records), else the ROCm release (or upstream) and where it comes from."""
    if isinstance(source, str):   # a wheel made before the sources were structured
        return source
    if "install" in source:
        return str(source["install"])
    suites, suite = source.get("debian_suites") or [], debian_suite(system)
    if source.get("debian") and suite is not None and suite in suites:
        return f"{source['what']}: Debian's {source['debian']}, or {source['rocm']}"
    if source.get("debian") and suite == "sid" and "experimental" in suites:
        return (f"{source['what']}: Debian's {source['debian']} from experimental (add experimental to apt's "
                f"sources), or {source['rocm']}")
    return f"{source['what']}: {source['rocm']}"


def _install(info: dict[str, Any], facts: dict[str, Any], soname: str) -> str:
    source = (info.get("install") or {}).get(soname)
    return install_words(source, facts.get("system")) if source else f"the package that provides {soname}"


def _rocm_piece(lib: dict[str, Any], info: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    soname, rocm = lib["soname"], _rocm_name(info)
    install = _install(info, facts, soname)
    if lib["found"] and versions_needed(lib["error"], None):
        return _newer_library_piece(lib, install, facts)
    if lib["found"]:
        return _piece(f"needs {rocm}: {soname} at {lib['path']} does not load: {lib['error']}",
                      f"reinstall {install}; the loader's error above names what it lacks")
    if lib["elsewhere"]:
        folders = ", ".join(lib["elsewhere"])
        return _piece(f"needs {rocm} ({soname} in {folders}, which the loader does not search)",
                      f"add {lib['elsewhere'][0]} to LD_LIBRARY_PATH, or write it into a file in /etc/ld.so.conf.d "
                      f"and run ldconfig" + _other_variants(info, soname))
    return _piece(f"needs {rocm} ({soname} not found)",
                  f"install {install}, or put the folder that holds {soname} on LD_LIBRARY_PATH"
                  + _other_variants(info, soname))


def _newer_library_piece(lib: dict[str, Any], install: str, facts: dict[str, Any]) -> dict[str, Any]:
    """A library outside the wheel, found, that was built for a newer system than this one."""
    words = cannot_run_words(versions_needed(lib["error"], None), facts)
    return _piece(f"{lib['soname']} at {lib['path']} does not load: it {words} (the loader: {lib['error']})",
                  f"install a build of {install} made for this system")


def _external_piece(lib: dict[str, Any], info: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """A library left external that is not ROCm (a recipe's excludes; on Windows, Windows' own DLLs): this machine
    must provide it."""
    soname, install = lib["soname"], _install(info, facts, lib["soname"])
    if lib["found"] and versions_needed(lib["error"], None):
        return _newer_library_piece(lib, install, facts)
    if lib["found"]:
        return _piece(f"needs {soname}: {soname} at {lib['path']} does not load: {lib['error']}",
                      f"reinstall {install}; the loader's error above names what it lacks")
    if _windows(facts):
        return _piece(f"needs {soname} (not found in the DLL search)", f"it comes with {install}")
    return _piece(f"needs {soname} (not found; the wheel leaves it external)",
                  f"install {install}, or put the folder that holds {soname} on LD_LIBRARY_PATH")


def _windows(facts: dict[str, Any]) -> bool:
    return (facts.get("system") or {}).get("id") == "windows"


def _carried_piece(lib: dict[str, Any], dll: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    """A DLL the wheel carries that a packaged DLL was bound to elsewhere: a copy of that name already in the
    process, or, with the wheel's copy gone, one from the working directory or PATH."""
    name, bound = dll["dll"], dll["bound_to"] or "another file"
    reinstall = f"pip install --force-reinstall {info['distribution']}=={info['version']}"
    if not dll.get("wheel_copy_present", True):
        return _piece(f"{lib['file']} took {name} from {bound}: the wheel's copy ({dll['wheel_copy']}) is missing",
                      f"reinstall the package: {reinstall}")
    return _piece(f"{lib['file']} is bound to {bound}, not the {name} the wheel carries ({dll['wheel_copy']}): a "
                  f"{name} of that name was loaded into this process first, and Windows reuses it",
                  f"register this EP before anything that loads another {name} (in a fresh process, `python -m "
                  f"{info.get('import_package')}` shows the wheel's copy bound)")


def _flavours(info: dict[str, Any], spec: str, first: str | None) -> str:
    flavours = info.get("onnxruntime_flavours") or [{"distribution": "onnxruntime", "what": "the CPU build"}]
    flavours = sorted(flavours, key=lambda f: f["distribution"] != first)
    return " or ".join(f"pip install '{f['distribution']}{spec}' ({f['what']})" for f in flavours)


def _onnxruntime_piece(ort: dict[str, Any], info: dict[str, Any]) -> dict[str, Any] | None:
    spec = ort["supported"]
    if len(ort["distributions"]) > 1:
        names = " ".join(d.split()[0] for d in ort["distributions"])
        return _piece(f"{len(ort['distributions'])} ONNX Runtime distributions share the onnxruntime module "
                      f"({', '.join(ort['distributions'])}): each overwrote the other's files",
                      f"keep one: pip uninstall {names}, then {_flavours(info, spec, ort['distribution'])}")
    if ort["version"] is None:
        return _piece(f"no ONNX Runtime is installed (this EP needs onnxruntime{spec}, the plugin EP API)",
                      f"install one: {_flavours(info, spec, None)}; one only, they share the onnxruntime module")
    if not ort["in_range"]:
        return _piece(f"{ort['distribution']} {ort['version']} is outside the range this EP supports ({spec}, the "
                      f"plugin EP API), so it was not registered",
                      f"replace it: pip uninstall {ort['distribution']}, then "
                      f"{_flavours(info, spec, ort['distribution'])}")
    return None


def _library_piece(lib: dict[str, Any], info: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    needs = versions_needed(lib["error"], (info.get("build") or {}).get("symbol_versions"))
    if needs:  # no package provides a newer glibc or libstdc++: the wheel was built for a newer system
        return _piece(f"{lib['file']} cannot run here: this wheel {cannot_run_words(needs, facts)} (the loader: "
                      f"{lib['error']})", newer_system_do(needs))
    missing = re.search(r"(lib[\w.+-]+\.so[\w.]*): cannot open shared object file", lib["error"] or "")
    hint = _install(info, facts, missing.group(1)) if missing and missing.group(1) in (info.get("install") or {}) \
        else None
    do = (f"install {hint}" if hint else
          "the loader's error names what it lacks: install the package that provides it")
    return _piece(f"{lib['file']} does not load here: {lib['error']}", do)


# The loader's words for a library that needs a symbol version this machine's glibc or libstdc++ does not define.
VERSION_NOT_FOUND = re.compile(r"version [`'](GLIBC|GLIBCXX|CXXABI)_(\d+(?:\.\d+)*)' not found")


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def versions_needed(error: str | None, recorded: dict[str, str] | None) -> dict[str, str]:
    """The symbol versions ({"GLIBC": "2.43", ...}) a library that fails to load with `error` needs: those the build
    recorded (the highest its libraries need), raised to any the loader names; empty when the error names none."""
    named = VERSION_NOT_FOUND.findall(error or "")
    if not named:
        return {}
    out = dict(recorded or {})
    for family, version in named:
        if family not in out or _numbers(version) > _numbers(out[family]):
            out[family] = version
    return out


def cannot_run_words(needs: dict[str, str], facts: dict[str, Any]) -> str:
    """'needs glibc >= 2.43 and the libstdc++ it was built with (GLIBCXX_3.4.32 or newer); this machine has glibc
    2.36 and libstdc++ up to GLIBCXX_3.4.30, so it cannot run here'."""
    here = facts.get("c_runtime") or {}
    cxx = [f"{family}_{needs[family]}" for family in ("GLIBCXX", "CXXABI") if family in needs]
    wants = [f"glibc >= {needs['GLIBC']}"] if "GLIBC" in needs else []
    wants += [f"the libstdc++ it was built with ({' and '.join(cxx)} or newer)"] if cxx else []
    has = [f"glibc {here.get('glibc') or '(version unknown)'}"]
    if cxx:
        has.append(f"libstdc++ up to GLIBCXX_{here['glibcxx']}" if here.get("glibcxx") else
                   "no libstdc++.so.6 the loader finds")
    return f"needs {' and '.join(wants)}; this machine has {' and '.join(has)}, so it cannot run here"


def newer_system_do(needs: dict[str, str]) -> str:
    floor = f"glibc {needs['GLIBC']} or newer" if "GLIBC" in needs else "a newer libstdc++"
    return (f"no package installs a newer glibc or libstdc++ beside this system's: run it on a system with {floor} "
            f"(a newer distribution release, or a container of one), or use a build of the wheel made for this "
            f"system's glibc")


def _gpu_piece(facts: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    gpu, ep, trace = facts["gpus"], facts["ep_name"], info.get("trace_env")
    said = info.get("no_device")
    if "adapters" in gpu and not gpu["amd"]:
        adapters = ", ".join(f"{a['description']} of vendor {a['vendor']}" for a in gpu["adapters"] or []) or "none"
        return _piece(f"no AMD GPU among DirectX's adapters ({adapters}): {ep} registers and offers zero devices",
                      "on this machine models run on ONNX Runtime's CPUExecutionProvider (a session without this "
                      "EP's devices); to run on the GPU, use a machine with an AMD GPU and AMD's Windows driver, "
                      "which gives DirectX 12 its adapter")
    if "adapters" in gpu:
        return _piece(f"an AMD GPU is here but {ep} offers zero devices",
                      f"run with {trace}=1 to see what it does with the GPU" if trace else
                      "check that the AMD driver gives DirectX 12 the GPU (dxdiag lists it)")
    if not gpu["amd"]:
        nodes = ", ".join(f"{n['node']} of vendor {n['vendor']}" for n in gpu["render_nodes"]) or "none"
        # The recipe says why this EP offers nothing here, and what turns a device on ([wheel.no_device]).
        why = f" ({said['why']})" if said else ""
        enable = (f"to run a session on {ep} here, set {' '.join(f'{k}={v}' for k, v in said['env'].items())}: it "
                  f"turns on {said['enables']}; otherwise " if said else "")
        return _piece(f"no AMD GPU here (render nodes: {nodes}; none of vendor {AMD_VENDOR}; /dev/kfd "
                      f"{'present' if gpu['kfd'] else 'absent'}): {ep} registers and offers zero devices{why}",
                      f"{enable}on this machine models run on ONNX Runtime's CPUExecutionProvider (a session "
                      "without this EP's devices); to run on the GPU, use a machine with an AMD GPU and the amdgpu "
                      "kernel driver (/dev/kfd and a render node of vendor 0x1002; a container needs --device /dev/kfd "
                      "--device /dev/dri)")
    if not gpu["kfd_access"]:
        if gpu["kfd"]:
            return _piece(f"an AMD GPU is here but this user cannot open /dev/kfd: {ep} offers zero devices",
                          "add the user to the render and video groups (sudo usermod -aG render,video $USER), "
                          "then log in again")
        return _piece(f"an AMD GPU is here but /dev/kfd is absent: {ep} offers zero devices",
                      "load the amdgpu kernel driver (a ROCm-supported kernel; in a container, --device /dev/kfd)")
    how = f"run with {trace}=1 to see what it does with the GPU" if trace else \
        "check that the installed ROCm supports this GPU (rocminfo lists the agents it sees)"
    return _piece(f"an AMD GPU is here but {ep} offers zero devices", how)


def _runtime_piece(lib: dict[str, Any], info: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any] | None:
    """A library a backend loads at run time, with the verdict it carries: missing or not loading, it costs that
    backend only (optional); a test build found there is what the backend would run (blocking)."""
    name, by, install = lib["name"], lib["needed_by"], _install(info, facts, lib["name"])
    if not lib["found"]:
        return _piece(f"{name} not found (loaded by {by} at run time)", f"install {install}", blocking=False)
    wheel, where = lib.get("wheel") or {}, f"{name} at {lib['path']} (loaded by {by} at run time)"
    if lib.get("loads") is False:
        needs = versions_needed(lib["error"], wheel.get("symbol_versions"))
        if needs:
            words = cannot_run_words(needs, facts)
            return _piece(f"{where} cannot run here: {wheel.get('distribution') or 'it'} {words} (the loader: "
                          f"{lib['error']})", newer_system_do(needs), blocking=False)
        return _piece(f"{where} does not load here: {lib['error']}",
                      f"the loader's error names what it lacks; {name} comes from {install}", blocking=False)
    test_only = sorted((wheel.get("test_build") or {}).items())
    if test_only:
        feature, why = test_only[0]
        return _piece(f"{where} is a test build of {wheel['distribution']} (feature {feature}: {why}): {by} would "
                      f"load it, and it runs no model", f"uninstall {wheel['distribution'].split()[0]} and install "
                      f"{install}")
    return None


def missing_pieces(facts: dict[str, Any], info: dict[str, Any]) -> list[dict[str, Any]]:
    """Every missing piece in the order a user should take them; empty when the EP offers a device here."""
    pieces = []
    for feature, why in sorted((info.get("test_build") or {}).items()):
        # No index need have a release of it: the recipe names the command that builds the wheel users run.
        build = info.get("real_build")
        do = (f"build the wheel without {feature} with the ort-amdgpu toolkit ({build}) and install that one"
              if build else f"build {info['distribution']} without {feature} (--without-{feature} --wheel) and "
                            f"install that one")
        pieces.append(_piece(f"this is a test build (feature {feature}: {why}): it does not run models", do))
    if len(facts.get("installed_as") or []) > 1:
        names = facts["installed_as"]
        choices = "; ".join(f"ROCm {v.removeprefix('rocm')}: {c}" for v, c in variant_choices(info))
        pieces.append(_piece(f"{len(names)} distributions install the {info.get('import_package')} package "
                             f"({', '.join(names)}): each overwrote the other's files",
                             f"keep one: pip uninstall {' '.join(names)}, then install the one this machine "
                             f"needs" + (f" ({choices})" if choices else "")))
    rocm = [lib for lib in facts["rocm_libraries"] if not (lib["found"] and lib["loads"])]
    pieces += [_rocm_piece(lib, info, facts) for lib in rocm]
    external = [lib for lib in facts.get("external_libraries") or [] if not (lib["found"] and lib["loads"])]
    pieces += [_external_piece(lib, info, facts) for lib in external]
    rocm += external
    ort = _onnxruntime_piece(facts["onnxruntime"], info)
    pieces += [ort] if ort else []
    broken = [lib for lib in facts["libraries"] if not lib["loads"]]
    pieces += [_carried_piece(lib, dll, info) for lib in facts["libraries"] for dll in lib.get("carried_imports") or []
               if not dll["is_wheel_copy"]]
    # A packaged library that fails for a ROCm library named above needs nothing more than that one.
    pieces += [_library_piece(lib, info, facts) for lib in broken
               if not any(f"{r['soname']}:" in (lib["error"] or "") for r in rocm)]
    registration = facts["registration"]
    if registration["error"] and not broken:
        trace = info.get("trace_env")
        pieces.append(_piece(f"registering {facts['ep_name']} with onnxruntime fails: {registration['error']}",
                             f"run with {trace}=1 to see what the EP does" if trace else
                             "the error is ONNX Runtime's; the facts above say what the EP found"))
    pieces += [p for p in (_runtime_piece(lib, info, facts) for lib in facts["runtime_libraries"]) if p]
    if not registration["devices"] and not [p for p in pieces if p["blocking"]]:
        pieces.append(_gpu_piece(facts, info))
    return pieces
