"""Wheels for the release tests: gcc-built shared libraries (a fake ROCm runtime, a library a wheel
bundles, an extension linking both and libm) packed into tiny well-formed wheels, and a build function
run_release takes, with the facts a real build records. The `release_libs` fixture (conftest.py) builds
the libraries once per session."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import zipfile
from pathlib import Path

from tests.support.tools import need
from toolkit.recipe.release import ReleaseSettings, TargetSet
from toolkit.release.matrix import Entry, plan_matrix
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml


def build_release_libs(d: Path) -> Path:
    """A fake ROCm runtime, a library the wheel bundles, and an extension linking both plus libm."""
    need("gcc")
    (d / "hip.c").write_text("int hipGetDeviceCount(int *n) { *n = 0; return 100; }\n")
    (d / "foo.c").write_text("double foo_scale(double x) { return 2.0 * x; }\n")
    (d / "ext.c").write_text(
        "#include <math.h>\n"
        "int hipGetDeviceCount(int *n);\n"
        "double foo_scale(double x);\n"
        "double ext_value(double x) { int n; hipGetDeviceCount(&n); return foo_scale(sqrt(x)) + n; }\n")

    def gcc(*args):
        subprocess.run(["gcc", *args], cwd=d, check=True)

    gcc("-shared", "-fPIC", "-Wl,-soname,libamdhip64.so.6", "-o", "libamdhip64.so.6", "hip.c")
    os.symlink("libamdhip64.so.6", d / "libamdhip64.so")
    gcc("-shared", "-fPIC", "-Wl,-soname,libfoo.so.1", "-o", "libfoo.so.1", "foo.c")
    os.symlink("libfoo.so.1", d / "libfoo.so")
    gcc("-shared", "-fPIC", "-o", "_ext.so", "ext.c", f"-L{d}", "-lamdhip64", "-lfoo", "-lm",
        "-Wl,-rpath,$ORIGIN/../tinypkg.libs")
    return d


def make_wheel(libs: Path, dest: Path, entry: Entry) -> Path:
    """A tiny but well-formed wheel (METADATA, WHEEL, RECORD) holding the extension and its bundled lib."""
    local = entry.target_set + ("." + ".".join(entry.features) if entry.features else "")
    version = f"1.0+{local}"
    tag = f"{entry.python_tag}-{entry.python_tag}-linux_x86_64"
    dist = f"tinypkg-{version}.dist-info"
    files = {
        "tinypkg/__init__.py": b"from ._ext import *\n",
        "tinypkg/_ext.so": (libs / "_ext.so").read_bytes(),
        "tinypkg.libs/libfoo.so.1": (libs / "libfoo.so.1").read_bytes(),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: tinypkg\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = dest / f"tinypkg-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return wheel


SOURCE_SHA = "a" * 64
PATCH_SHA = "b" * 64


def builder(libs: Path, calls: list | None = None, facts_override: dict | None = None):
    def build(entry: Entry, work: Path):
        if calls is not None:
            calls.append(entry.id)
        wheel = make_wheel(libs, work, entry)
        facts = {
            "sources": [{"name": "umbrella-ep", "uri": "https://example.invalid/ep.tar.gz", "sha256": SOURCE_SHA}],
            "patches": [{"name": "0001-rename-hipep-to-hipdnn.patch", "sha256": PATCH_SHA}],
            "commands": [["cmake", "-S", "src", "-B", "build", f"-DGPU_TARGETS={';'.join(entry.gpu_targets)}"],
                         ["cmake", "--build", "build"]],
        }
        facts.update(facts_override or {})
        return wheel, facts
    return build


def two_entries() -> list[Entry]:
    settings = ReleaseSettings(python=("3.11",),
                               target_sets=(TargetSet("cdna", ("gfx90a", "gfx942")),),
                               features=((), ("hipdnn",)))
    return plan_matrix(settings)


def release_settings(tmp_path: Path, text: str) -> ReleaseSettings:
    """The [release] table of a recipe whose text is `text`, read as the recipe loader reads it."""
    recipe = tmp_path / "r.toml"
    recipe.write_text(text)
    return read(ReleaseSettings, load_toml(recipe).table("release"))
