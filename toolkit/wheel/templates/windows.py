"""The Windows side of the self-check (shipped as `_windows.py`, imported by `_selfcheck.py` on Windows only):
where Windows' loader takes a DLL from, which file a loaded DLL was bound to, DXGI's adapters and the system's name.
Standard library only (ctypes and winreg)."""

from __future__ import annotations

import sys

# Windows only; mypy skips the rest of this module on other platforms.
assert sys.platform == "win32"

import ctypes  # noqa: E402
import os  # noqa: E402
from typing import Any  # noqa: E402

# How ONNX Runtime loads an EP library on Windows (LoadLibraryExW): the DLLs it imports are looked for in its own
# folder first. The packaged DLLs are loaded the same way, so that the answer is ORT's.
LOAD_WITH_ALTERED_SEARCH_PATH = 0x8


def _kernel32() -> Any:
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


def carried_imports(library: ctypes.CDLL, info: dict[str, Any], here: str) -> list[dict[str, Any]]:
    """The DLLs the wheel carries (its components, and any DLL beside them) that a loaded DLL imports, each with the
    file it was bound to and whether that is the wheel's copy: else a DLL of that name already in the process, or,
    with the wheel's copy gone, the working directory's or PATH's."""
    files = [c["file"] for c in info["components"]] + [e for e in os.listdir(here) if e.lower().endswith(".dll")]
    carried = {os.path.basename(f).lower(): f for f in reversed(files)}
    out = []
    for name, bound in bound_imports(library):
        if name.lower() in carried:
            copy = os.path.join(here, carried[name.lower()])
            out.append({"dll": name, "bound_to": bound, "wheel_copy": copy, "wheel_copy_present": os.path.isfile(copy),
                        "is_wheel_copy": bound is not None and os.path.normcase(bound) == os.path.normcase(copy)})
    return out


def dxgi_adapters() -> list[dict[str, Any]] | None:
    """The adapters DXGI lists (those DirectX 12, and so DirectML, can use), or None where DXGI cannot be asked."""

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


def windows_system() -> dict[str, Any]:
    """Windows' version, and Wine's where Wine runs it (ntdll's wine_get_version)."""
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
