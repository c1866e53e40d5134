"""Can this machine run the EP? `check()` gathers the facts as a dict; `python -m <package>` prints them
(_report.py), with what to do about each missing piece (_advice.py).

Shipped in every wheel the ort-amdgpu toolkit makes (as `_selfcheck.py`), so it uses only the standard library:
the libraries the packaged ones link were recorded at build time (ELF NEEDED entries, or a DLL's imports of
Windows' own DLLs, in _wheel_info.json); what is checked here is whether this machine's loader finds each one
(Linux: LD_LIBRARY_PATH, the libraries' RUNPATH, /etc/ld.so.cache, the default folders; Windows: the DLL search
order ONNX Runtime loads an EP library under), whether it loads (ctypes, as ORT loads it: the loader's own error
when not), which file each DLL the wheel carries was bound to, the AMD GPUs the kernel (or DXGI) shows, the
onnxruntime installed, and what ORT says when the EP library is registered with it (not tried with an ORT outside
the wheel's range).
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import re
import struct
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
AMD_VENDOR = "0x1002"
DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")
# Where ROCm installs put their libraries when no loader configuration names them: worth a hint, not a find.
ROCM_HINT_GLOBS = ("/opt/rocm/lib", "/opt/rocm-*/lib")


def wheel_info() -> dict[str, Any]:
    with open(os.path.join(HERE, "_wheel_info.json"), encoding="utf-8") as handle:
        info: dict[str, Any] = json.load(handle)
        return info


# -- where the dynamic loader would find a soname -------------------------------------------------------------

def ld_cache(path: str = "/etc/ld.so.cache") -> dict[str, list[str]]:
    """soname -> paths, from glibc's loader cache (the 1.1 format, alone or after the old one)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    new_magic = b"glibc-ld.so.cache1.1"
    base = 0
    if data.startswith(b"ld.so-1.7.0"):
        count = struct.unpack_from("<I", data, 12)[0]
        base = (16 + count * 12 + 7) & ~7
    if data[base:base + len(new_magic)] != new_magic:
        return {}
    count = struct.unpack_from("<I", data, base + 20)[0]
    found: dict[str, list[str]] = {}

    def string(offset: int) -> str:
        start = base + offset
        return data[start:data.index(b"\0", start)].decode("utf-8", "replace")

    for i in range(count):
        _flags, key, value = struct.unpack_from("<iII", data, base + 48 + i * 24)
        found.setdefault(string(key), []).append(string(value))
    return found


def rocm_hint_dirs() -> list[str]:
    dirs = [os.path.join(os.environ["ROCM_PATH"], "lib")] if os.environ.get("ROCM_PATH") else []
    for pattern in ROCM_HINT_GLOBS:
        dirs += sorted(glob.glob(pattern))
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d)))


def search(soname: str, runpath: list[str], cache: dict[str, list[str]]) -> tuple[str | None, str]:
    """(path, how) the loader would take for `soname` needed by a packaged library, in ld.so's order (Windows' DLL
    search on Windows)."""
    if sys.platform == "win32":
        from ._windows import windows_search

        return windows_search(soname, HERE)
    for folder in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        if os.path.isfile(os.path.join(folder, soname)):
            return os.path.join(folder, soname), "LD_LIBRARY_PATH"
    for folder in runpath:
        # normpath: an entry that leaves the package ($ORIGIN/../<sibling package>) is shown as the folder it is.
        folder = os.path.normpath(folder.replace("${ORIGIN}", HERE).replace("$ORIGIN", HERE))
        if os.path.isfile(os.path.join(folder, soname)):
            return os.path.join(folder, soname), "RUNPATH"
    for path in cache.get(soname, []):
        if os.path.isfile(path):
            return path, "ld.so.cache"
    for folder in DEFAULT_DIRS:
        if os.path.isfile(os.path.join(folder, soname)):
            return os.path.join(folder, soname), "default folder"
    return None, "not found"


def loaded_path(library: ctypes.CDLL) -> str | None:
    """Where the loader took a library from (dlinfo's link map; Windows: the module's file), or None where dlinfo is
    not available."""
    if sys.platform == "win32":
        from ._windows import module_path

        return module_path(library._handle)

    class LinkMap(ctypes.Structure):
        _fields_ = [("l_addr", ctypes.c_size_t), ("l_name", ctypes.c_char_p)]

    for owner in (None, "libdl.so.2"):
        try:
            dlinfo = ctypes.CDLL(owner).dlinfo
        except (OSError, AttributeError):
            continue
        link_map = ctypes.POINTER(LinkMap)()
        if dlinfo(ctypes.c_void_p(library._handle), 2, ctypes.byref(link_map)) == 0 and link_map:
            name = link_map.contents.l_name
            return name.decode("utf-8", "replace") if name else None
    return None


def load(target: str) -> tuple[ctypes.CDLL | None, str | None]:
    """(the library, None) or (None, the loader's error) for a soname or a path: RTLD_LOCAL on Linux; on Windows a
    path as ORT loads an EP library, a bare name by the standard search."""
    try:
        if sys.platform == "win32":
            from ._windows import LOAD_WITH_ALTERED_SEARCH_PATH

            flags = LOAD_WITH_ALTERED_SEARCH_PATH if os.path.isabs(target) else 0
            return ctypes.WinDLL(target, winmode=flags), None
        return ctypes.CDLL(target, mode=os.RTLD_LOCAL), None
    except OSError as exc:
        return None, str(exc)


def try_load(target: str) -> tuple[bool, str | None, str | None]:
    """(loads, path it was loaded from, the loader's error) for a soname or a path."""
    library, error = load(target)
    return (True, loaded_path(library), None) if library is not None else (False, None, error)


def rocm_libraries(info: dict[str, Any]) -> list[dict[str, Any]]:
    return linked_libraries(info, info["build"].get("rocm_libraries", []), "rocm_needed")


def external_libraries(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The libraries left external that are not ROCm (the recipe's excludes), looked up likewise."""
    return linked_libraries(info, info.get("external_libraries") or [], "external_needed")


def linked_libraries(info: dict[str, Any], sonames: list[str], key: str) -> list[dict[str, Any]]:
    """Each soname the packaged libraries link (`key`: which of a component's lists names it), found and loaded as
    the loader would."""
    cache = ld_cache()
    out = []
    for soname in sonames:
        users = [c for c in info["components"] if soname in c.get(key, [])]
        runpath = [entry for c in users for entry in c.get("runpath", [])]
        path, how = search(soname, runpath, cache)
        loads, loaded, error = try_load(path or soname)
        hints = [d for d in rocm_hint_dirs() if os.path.isfile(os.path.join(d, soname))] if path is None else []
        out.append({"soname": soname, "needed_by": [c["file"] for c in users], "found": path is not None or loads,
                    "path": path or loaded, "how": how if path else ("dlopen" if loads else how),
                    "loads": loads, "error": error, "elsewhere": hints})
    return out


# -- GPUs, onnxruntime, the packaged libraries -----------------------------------------------------------------

def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def gpus() -> dict[str, Any]:
    """The GPUs this machine shows: the kernel's render nodes and /dev/kfd; on Windows, DXGI's adapters."""
    if sys.platform == "win32":
        from ._windows import dxgi_adapters

        adapters = dxgi_adapters()
        return {"adapters": adapters, "amd": [a for a in adapters or [] if a["vendor"] == AMD_VENDOR]}
    nodes = []
    for folder in sorted(glob.glob("/sys/class/drm/renderD*")):
        name = os.path.basename(folder)
        nodes.append({"node": f"/dev/dri/{name}", "vendor": _read(f"{folder}/device/vendor"),
                      "device": _read(f"{folder}/device/device"), "present": os.path.exists(f"/dev/dri/{name}")})
    kfd = os.path.exists("/dev/kfd")
    return {"kfd": kfd, "kfd_access": kfd and os.access("/dev/kfd", os.R_OK | os.W_OK), "render_nodes": nodes,
            "amd": [n for n in nodes if n["vendor"] == AMD_VENDOR]}


def _release(version: str) -> tuple[int, ...]:
    match = re.match(r"\d+(\.\d+)*", version)
    return tuple(int(x) for x in match.group(0).split(".")) if match else ()


def _compare(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return (a > b) - (a < b)


def in_range(version: str, spec: str) -> bool:
    """Whether `version` satisfies a PEP 440 range of release numbers (>=, <=, >, <, ==, !=, ~=, X.Y.*)."""
    have = _release(version)
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        match = re.fullmatch(r"(~=|===|==|!=|<=|>=|<|>)\s*(\d+(?:\.\d+)*)(\.\*)?", clause)
        if match is None:
            return False
        op, want, star = match.group(1), _release(match.group(2)), match.group(3)
        if star or op == "~=":
            prefix = want if star else want[:-1]
            same = have[:len(prefix)] == prefix
            ok = (same if op in ("==", "===") else not same) if star else same and _compare(have, want) >= 0
        else:
            c = _compare(have, want)
            ok = {"==": c == 0, "===": c == 0, "!=": c != 0, "<=": c <= 0, ">=": c >= 0, "<": c < 0, ">": c > 0}[op]
        if not ok:
            return False
    return True


def providers_of(module: str) -> list[str]:
    """The installed distributions that provide the top-level `module` (more than one overwrite each other)."""
    from importlib import metadata

    try:
        return list(dict.fromkeys(metadata.packages_distributions().get(module, [])))
    except Exception:  # a broken distribution elsewhere in site-packages must not stop the check
        return []


def onnxruntime_facts(spec: str) -> dict[str, Any]:
    """The ONNX Runtime distribution(s) providing the `onnxruntime` module, whichever flavour, against `spec`."""
    from importlib import metadata

    found = []
    for name in providers_of("onnxruntime") or ["onnxruntime"]:
        try:
            found.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    if not found:
        return {"distribution": None, "version": None, "supported": spec, "in_range": False, "distributions": []}
    name, version = found[0]
    return {"distribution": name, "version": version, "supported": spec, "in_range": in_range(version, spec),
            "distributions": [f"{n} {v}" for n, v in found]}


def libraries(info: dict[str, Any]) -> list[dict[str, Any]]:
    """Each packaged library loaded as ORT loads it; on Windows, with the file each DLL the wheel carries was bound
    to."""
    out = []
    for c in info["components"]:
        library, error = load(os.path.join(HERE, c["file"]))
        fact = {"file": c["file"], "ep_name": c.get("ep_name"), "plugin": c.get("plugin", True),
                "loads": library is not None, "error": error, "runtime": c.get("runtime")}
        if sys.platform == "win32":
            from ._windows import carried_imports

            fact["carried_imports"] = carried_imports(library, info, HERE) if library is not None else []
        out.append(fact)
    return out


def runtime_libraries(info: dict[str, Any]) -> list[dict[str, Any]]:
    """Libraries outside the wheel that packaged libraries load by bare name at run time (the recipe's dlopens): each
    found one is loaded as the packaged ones are, and carries its own wheel's verdict (test build, symbol versions)."""
    cache = ld_cache()
    out = []
    for c in info["components"]:
        for name in c.get("dlopens", []):
            path, how = search(name, c.get("runpath", []), cache)
            hints = [d for d in rocm_hint_dirs() if os.path.isfile(os.path.join(d, name))] if path is None else []
            loads, _, error = try_load(path) if path else (False, None, None)
            out.append({"name": name, "needed_by": c["file"], "found": path is not None, "path": path, "how": how,
                        "elsewhere": hints, "loads": loads, "error": error, "wheel": wheel_beside(path)})
    return out


def wheel_beside(path: str | None) -> dict[str, Any]:
    """What the wheel that installed a found library says of it (its _wheel_info.json beside it, when one lists that
    library: onnxruntime-ep-hip's): its name, its test-only features, the symbol versions it needs."""
    try:
        with open(os.path.join(os.path.dirname(path or ""), "_wheel_info.json"), encoding="utf-8") as handle:
            other = json.load(handle)
        if path and any(c.get("file") == os.path.basename(path) for c in other["components"]):
            return {"distribution": f"{other['distribution']} {other['version']}",
                    "test_build": dict(other.get("test_build") or {}),
                    "symbol_versions": (other.get("build") or {}).get("symbol_versions")}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return {}


def c_runtime() -> dict[str, Any]:
    """This machine's glibc, and the highest GLIBCXX_ its libstdc++ defines: a wheel whose libraries need newer
    symbol versions (the build recorded theirs) cannot load here, whatever is installed beside it. Nothing on
    Windows, whose DLLs version nothing that way."""
    if sys.platform == "win32":
        return {"glibc": None, "libstdcxx": None, "glibcxx": None}
    try:
        said = os.confstr("CS_GNU_LIBC_VERSION") or ""  # "glibc 2.36"
    except (ValueError, OSError, AttributeError):
        said = ""
    glibc = said.split()[-1] if said.startswith("glibc ") else None
    if glibc is None:
        import platform

        name, version = platform.libc_ver()
        glibc = version if name == "glibc" and version else None
    _, path, _ = try_load("libstdc++.so.6")
    glibcxx = None
    try:
        with open(path or "", "rb") as handle:
            found = re.findall(rb"GLIBCXX_(\d+\.\d+(?:\.\d+)?)\0", handle.read())
        glibcxx = ".".join(map(str, max(_release(v.decode()) for v in found))) if found else None
    except OSError:
        pass
    return {"glibc": glibc, "libstdcxx": path, "glibcxx": glibcxx}


def system() -> dict[str, Any]:
    """This machine's distribution, from os-release: the advice names a distribution's package only where it has it.
    On Windows its version, and Wine's where Wine runs it (ntdll's wine_get_version)."""
    if sys.platform == "win32":
        from ._windows import windows_system

        return windows_system()
    fields: dict[str, str] = {}
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        text = _read(path)
        if text is not None:
            for line in text.splitlines():
                key, sep, value = line.partition("=")
                if sep:
                    fields[key.strip()] = value.strip().strip('"').strip("'")
            break
    return {"id": fields.get("ID"), "version_id": fields.get("VERSION_ID"),
            "codename": fields.get("VERSION_CODENAME"), "name": fields.get("PRETTY_NAME")}


def no_device(info: dict[str, Any]) -> dict[str, Any] | None:
    """Why the EP may offer no device and what turns one on (the recipe's [wheel.no_device]), with whether each of
    those variables is set here as it asks."""
    said = info.get("no_device")
    if not said:
        return None
    env = said.get("env") or {}
    return {**said, "set": {name: os.environ.get(name) == value for name, value in env.items()}}


def check() -> dict[str, Any]:
    """Everything `python -m <package>` reports, as a dict; 'ready' is True when the EP offers a device here,
    'missing' names the first piece missing and what to do, 'todo' every piece (optional ones too)."""
    # Here, not at the top: the unit tests load this file outside its package.
    from ._advice import missing_pieces
    from ._registration import register

    info = wheel_info()
    main = next(c for c in info["components"] if c.get("ep_name"))
    ort = onnxruntime_facts(info.get("onnxruntime") or ">=1.22")
    facts = {
        "distribution": info["distribution"], "version": info["version"], "variant": info.get("rocm_variant"),
        "package_dir": HERE, "ep_name": main["ep_name"], "build": dict(info["build"]),
        "test_build": dict(info.get("test_build") or {}),
        "installed_as": providers_of(info.get("import_package") or os.path.basename(HERE)),
        "rocm_libraries": rocm_libraries(info), "external_libraries": external_libraries(info),
        "runtime_libraries": runtime_libraries(info), "gpus": gpus(),
        "onnxruntime": ort, "libraries": libraries(info),
        "registration": register(main["ep_name"], os.path.join(HERE, main["file"]), ort),
        "no_device": no_device(info), "system": system(), "c_runtime": c_runtime(),
    }
    facts["todo"] = missing_pieces(facts, info)
    blocking = [p for p in facts["todo"] if p["blocking"]]
    facts["missing"] = f"{blocking[0]['what']}. What to do: {blocking[0]['do']}" if blocking else None
    facts["ready"] = facts["missing"] is None and bool(facts["registration"]["devices"])
    return facts
