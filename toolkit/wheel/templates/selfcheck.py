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
# How ONNX Runtime loads an EP library on Windows (LoadLibraryExW): the DLLs it imports are looked for in its own
# folder first. The packaged DLLs are loaded here the same way, so that the answer is ORT's.
LOAD_WITH_ALTERED_SEARCH_PATH = 0x8
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
            flags = LOAD_WITH_ALTERED_SEARCH_PATH if os.path.isabs(target) else 0
            return ctypes.WinDLL(target, winmode=flags), None
        return ctypes.CDLL(target, mode=os.RTLD_LOCAL), None
    except OSError as exc:
        return None, str(exc)


def try_load(target: str) -> tuple[bool, str | None, str | None]:
    """(loads, path it was loaded from, the loader's error) for a soname or a path."""
    library, error = load(target)
    return (True, loaded_path(library), None) if library is not None else (False, None, error)


# -- Windows: where the loader takes a DLL from, and what a loaded DLL was bound to ----------------------------

def _kernel32() -> Any:
    if sys.platform != "win32":  # the DLL search, the registry and DXGI are Windows'
        raise OSError("Windows only")
    # An own instance: argtypes set here must not change ctypes.windll's functions for the rest of the process.
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.GetModuleHandleW.argtypes = [ctypes.c_wchar_p]
    kernel32.GetModuleHandleW.restype = ctypes.c_void_p
    kernel32.GetModuleFileNameW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p, ctypes.c_uint32]
    kernel32.GetModuleHandleExW.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    kernel32.GetSystemDirectoryW.argtypes = [ctypes.c_wchar_p, ctypes.c_uint32]
    return kernel32


def module_path(handle: int | None) -> str | None:
    """The file a loaded module was mapped from (GetModuleFileNameW)."""
    if not handle:
        return None
    buffer = ctypes.create_unicode_buffer(32768)
    return buffer.value if _kernel32().GetModuleFileNameW(handle, buffer, len(buffer)) else None


def module_at(address: int) -> str | None:
    """The file of the loaded module that holds `address`."""
    handle = ctypes.c_void_p()
    from_address_unchanged = 0x4 | 0x2  # GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | _UNCHANGED_REFCOUNT
    if not _kernel32().GetModuleHandleExW(from_address_unchanged, address, ctypes.byref(handle)):
        return None
    return module_path(handle.value)


def known_dlls() -> set[str]:
    """The system's KnownDLLs: always taken from the system folder, whatever folder a DLL is loaded from."""
    if sys.platform != "win32":  # the DLL search, the registry and DXGI are Windows'
        raise OSError("Windows only")
    import winreg

    names = set()
    try:
        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE,
                            r"SYSTEM\CurrentControlSet\Control\Session Manager\KnownDLLs") as key:
            for i in range(winreg.QueryInfoKey(key)[1]):
                value = winreg.EnumValue(key, i)[1]
                if isinstance(value, str):
                    names.add(value.lower())
    except OSError:
        pass
    return names


def windows_search(name: str, folder: str) -> tuple[str | None, str]:
    """(path, how) Windows takes the DLL `name` from for a DLL in `folder` loaded as ORT loads an EP library
    (LoadLibraryExW with LOAD_WITH_ALTERED_SEARCH_PATH, safe DLL search mode): a module of that name already in
    the process, the system's KnownDLLs, the importing DLL's folder, the system folders, the Windows folder, the
    working directory, then PATH. A DLL missing from `folder` is taken from any of the later places."""
    kernel32 = _kernel32()
    loaded = module_path(kernel32.GetModuleHandleW(name))
    if loaded:
        return loaded, "already loaded in this process"
    buffer = ctypes.create_unicode_buffer(32768)
    system = buffer.value if kernel32.GetSystemDirectoryW(buffer, len(buffer)) else ""
    if name.lower() in known_dlls():
        return os.path.join(system, name), "KnownDLLs"
    windir = os.environ.get("SystemRoot") or os.path.dirname(system)
    places = [(folder, "the DLL's own folder"), (system, "system folder"), (os.path.join(windir, "System"),
              "16-bit system folder"), (windir, "Windows folder"), (os.getcwd(), "working directory")]
    places += [(entry, "PATH") for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    for place, how in places:
        path = os.path.join(place, name)
        if place and os.path.isfile(path):
            return path, how
    return None, "not found"


def bound_imports(library: ctypes.CDLL) -> list[tuple[str, str | None]]:
    """(DLL name, file) for each DLL a loaded DLL imports: the module that holds the address its first import from
    that DLL was bound to, which is the loader's own answer to the DLL search. Read from the mapped image's import
    directory (PE32+); [] for anything else."""
    base = library._handle

    def u32(offset: int) -> int:
        return ctypes.c_uint32.from_address(base + offset).value

    header = u32(0x3C)
    optional = header + 24
    if ctypes.c_uint16.from_address(base + optional).value != 0x20B:
        return []
    descriptor = u32(optional + 112 + 8)  # data directory 1: the import table
    out: list[tuple[str, str | None]] = []
    while descriptor and u32(descriptor + 12):
        name = ctypes.string_at(base + u32(descriptor + 12)).decode("ascii", "replace")
        slot = ctypes.c_uint64.from_address(base + u32(descriptor + 16)).value
        out.append((name, module_at(slot) if slot else None))
        descriptor += 20
    return out


def carried_imports(library: ctypes.CDLL, info: dict[str, Any]) -> list[dict[str, Any]]:
    """The DLLs the wheel carries (its components, and any DLL beside them) that a loaded DLL imports, each with the
    file it was bound to and whether that is the wheel's copy: else a DLL of that name already in the process, or,
    with the wheel's copy gone, the working directory's or PATH's."""
    files = [c["file"] for c in info["components"]] + [e for e in os.listdir(HERE) if e.lower().endswith(".dll")]
    carried = {os.path.basename(f).lower(): f for f in reversed(files)}
    out = []
    for name, bound in bound_imports(library):
        if name.lower() in carried:
            copy = os.path.join(HERE, carried[name.lower()])
            out.append({"dll": name, "bound_to": bound, "wheel_copy": copy, "wheel_copy_present": os.path.isfile(copy),
                        "is_wheel_copy": bound is not None and os.path.normcase(bound) == os.path.normcase(copy)})
    return out


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


def dxgi_adapters() -> list[dict[str, Any]] | None:
    """The adapters DXGI lists (those DirectX 12, and so DirectML, can use), or None where DXGI cannot be asked."""
    if sys.platform != "win32":  # the DLL search, the registry and DXGI are Windows'
        raise OSError("Windows only")

    class Guid(ctypes.Structure):
        _fields_ = [("a", ctypes.c_uint32), ("b", ctypes.c_uint16), ("c", ctypes.c_uint16),
                    ("d", ctypes.c_ubyte * 8)]

    class AdapterDesc1(ctypes.Structure):  # DXGI_ADAPTER_DESC1
        _fields_ = [("description", ctypes.c_wchar * 128), ("vendor", ctypes.c_uint32), ("device", ctypes.c_uint32),
                    ("subsys", ctypes.c_uint32), ("revision", ctypes.c_uint32), ("video_memory", ctypes.c_size_t),
                    ("system_memory", ctypes.c_size_t), ("shared_memory", ctypes.c_size_t),
                    ("luid_low", ctypes.c_uint32), ("luid_high", ctypes.c_int32), ("flags", ctypes.c_uint32)]

    def method(obj: ctypes.c_void_p, index: int, *argtypes: Any) -> Any:
        vtable = ctypes.cast(obj, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)))[0]
        return ctypes.WINFUNCTYPE(ctypes.c_long, ctypes.c_void_p, *argtypes)(vtable[index])

    iid_factory1 = Guid(0x770AAE78, 0xF26F, 0x4DBA, (ctypes.c_ubyte * 8)(0xA8, 0x29, 0x25, 0x3C, 0x83, 0xD1, 0xB3,
                                                                        0x87))
    try:
        create = ctypes.WinDLL("dxgi.dll").CreateDXGIFactory1
    except (OSError, AttributeError):
        return None
    create.restype = ctypes.c_long
    factory = ctypes.c_void_p()
    if create(ctypes.byref(iid_factory1), ctypes.byref(factory)) != 0 or not factory.value:
        return None
    out = []
    # IDXGIFactory1::EnumAdapters1 (12) until DXGI_ERROR_NOT_FOUND; IDXGIAdapter1::GetDesc1 (10); Release (2).
    for index in range(64):
        adapter = ctypes.c_void_p()
        if method(factory, 12, ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p))(factory, index,
                                                                                ctypes.byref(adapter)) != 0:
            break
        desc = AdapterDesc1()
        if method(adapter, 10, ctypes.POINTER(AdapterDesc1))(adapter, ctypes.byref(desc)) == 0:
            out.append({"description": desc.description, "vendor": f"{desc.vendor:#06x}",
                        "device": f"{desc.device:#06x}", "memory_mb": desc.video_memory // 2**20,
                        "software": bool(desc.flags & 2)})  # DXGI_ADAPTER_FLAG_SOFTWARE
        method(adapter, 2)(adapter)
    method(factory, 2)(factory)
    return out


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
            fact["carried_imports"] = carried_imports(library, info) if library is not None else []
        out.append(fact)
    return out


class _Stderr:
    """fd 2 sent to a file while ORT and the EP libraries run: their own lines become facts, not noise."""

    def __enter__(self) -> _Stderr:
        import tempfile

        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)

    def lines(self) -> list[str]:
        self.file.seek(0)
        # Each line once: ORT asks a library for its factories more than once, and the EP says the same each time.
        # ORT's Windows logger writes UTF-16 (wide characters) where the EP writes bytes: its NULs go.
        text = self.file.read().decode("utf-8", "replace").replace("\0", "")
        return list(dict.fromkeys(line for line in text.splitlines() if line.strip()))


def register(ep_name: str, path: str, ort_facts: dict[str, Any]) -> dict[str, Any]:
    """Register the EP library with ORT and list the devices it offers, then unregister. Not tried with an ORT
    outside the range: an ORT older than the plugin EP API the library asks for can crash the process."""
    if ort_facts["version"] is None or not ort_facts["in_range"]:
        found = (f"onnxruntime {ort_facts['version']} is installed" if ort_facts["version"] else
                 "onnxruntime is not installed")
        return {"attempted": False, "error": None, "devices": [], "log": [],
                "skipped": f"{found}; the EP needs onnxruntime{ort_facts['supported']}"}
    try:
        import onnxruntime as ort
    except Exception as exc:
        return {"attempted": False, "error": f"import onnxruntime: {type(exc).__name__}: {exc}", "devices": [],
                "log": []}
    if not hasattr(ort, "register_execution_provider_library"):
        return {"attempted": False, "error": f"onnxruntime {ort.__version__} has no plugin EP API (1.22 and later)",
                "devices": [], "log": []}

    def ours() -> list[dict[str, Any]]:
        return [{"type": d.device.type.name, "vendor": d.device.vendor, "vendor_id": f"{d.device.vendor_id:#06x}",
                 "device_id": f"{d.device.device_id:#06x}"} for d in ort.get_ep_devices() if d.ep_name == ep_name]

    already: dict[str, Any] = {"attempted": False, "error": None, "already_registered": True, "log": []}
    if ours():  # registered already in this process: its devices are the answer
        return {**already, "devices": ours()}
    with _Stderr() as said:
        try:
            ort.register_execution_provider_library(ep_name, path)
        except Exception as exc:
            if "already registered" in str(exc):  # by this process, with zero devices
                return {**already, "devices": [], "log": said.lines()}
            error = f"{type(exc).__name__}: {exc}"
            return {"attempted": True, "error": error, "devices": [], "log": said.lines()}
        devices = ours()
        try:
            ort.unregister_execution_provider_library(ep_name)
        except Exception:  # the devices are what was asked; a failed unregister is ORT's to report later
            pass
    return {"attempted": True, "error": None, "devices": devices, "log": said.lines()}


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
        import platform

        release, version = platform.win32_ver()[:2]
        try:
            wine_get_version = ctypes.WinDLL("ntdll").wine_get_version
            wine_get_version.restype = ctypes.c_char_p
            wine = wine_get_version().decode("ascii", "replace")
        except (OSError, AttributeError):
            wine = None
        return {"id": "windows", "version_id": version, "codename": None, "wine": wine,
                "name": f"Windows {release} ({version})" + (f", under Wine {wine}" if wine else "")}
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
    from ._advice import missing_pieces  # here, not at the top: the unit tests load this file outside its package

    facts["todo"] = missing_pieces(facts, info)
    blocking = [p for p in facts["todo"] if p["blocking"]]
    facts["missing"] = f"{blocking[0]['what']}. What to do: {blocking[0]['do']}" if blocking else None
    facts["ready"] = facts["missing"] is None and bool(facts["registration"]["devices"])
    return facts
