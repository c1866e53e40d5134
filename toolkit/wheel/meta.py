"""The meta-package of a recipe with ROCm variants: `<distribution>` holding no code, requiring the default variant
(the newest ROCm major) of the same version, so `pip install onnxruntime-ep-amdgpu` gives a working EP, as
NVIDIA's `onnxruntime-ep-nv-tensorrt-rtx` installs its CUDA 13 build. Every other variant installs by its own name
(`pip install onnxruntime-ep-amdgpu-rocm6`). No extras: an extra would add its variant to the default one, and the
variants share the import package, so two would overwrite each other.

It is pure metadata, so it is written here as a zip with the three dist-info files a wheel needs (PEP 427),
members sorted and dated by SOURCE_DATE_EPOCH (else 1980-01-01): the same settings give the same bytes. Written
beside its default variant's wheel (a release writes it last), it carries that wheel's license files and
License-Expression (PEP 639): it installs that code, and an index is not sent a wheel without a license.
"""

from __future__ import annotations

import io
import os
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from toolkit.recipe.core import SYS_PLATFORMS
from toolkit.recipe.wheel import WheelSettings
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_bytes
from toolkit.util.redact import shorten
from toolkit.wheel.project import REQUIRES_PYTHON, onnxruntime_words
from toolkit.wheel.wheelfile import dist_info_dir, read_headers, record_hash

TAG = "py3-none-any"


@dataclass(frozen=True)
class Licenses:
    """A wheel's license: its License-Expression and its license files (path under licenses/ -> bytes)."""
    expression: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)


def variant_licenses(settings: WheelSettings, folder: Path) -> Licenses:
    """The license of the default variant's wheel of this version in `folder`, else of another variant's there (a
    release of the Windows entry alone has only that one); none when no variant's wheel is there."""
    order = [settings.default_variant, *sorted(v for v in settings.variant_names if v != settings.default_variant)]
    stems = [f"{_file_stem(settings.distribution)}_{_file_stem(v)}-{settings.version}-" for v in order if v]
    found = sorted(p for p in Path(folder).glob("*.whl") if p.is_file()) if Path(folder).is_dir() else []
    wheels = [w for stem in stems for w in found if w.name.startswith(stem)]
    if not wheels:
        return Licenses()
    with zipfile.ZipFile(wheels[0]) as archive:
        info = dist_info_dir(archive)
        headers = read_headers(archive, "METADATA")
        files = {name.removeprefix(f"{info}/licenses/"): archive.read(name) for name in sorted(archive.namelist())
                 if name.startswith(f"{info}/licenses/") and not name.endswith("/")}
    return Licenses(headers.get("License-Expression") if headers else None, files)


def _file_stem(name: str) -> str:
    """A distribution name as wheel file names and dist-info folders spell it (PEP 427 / PEP 503)."""
    return canonicalize_name(name).replace("-", "_")


def metadata_text(settings: WheelSettings, licenses: Licenses | None = None) -> str:
    name, default = settings.distribution, settings.default_variant
    licenses = licenses or Licenses()
    # Each other system's variant by a sys_platform marker; then the ROCm one is for Linux only.
    others = [(variant, SYS_PLATFORMS[platform]) for platform, variant in settings.platform_variants]
    linux = f"; sys_platform == \"{SYS_PLATFORMS['linux']}\"" if others else ""
    where = "".join(f", the {variant} build on {platform.capitalize()}" for platform, variant
                    in settings.platform_variants)
    # PEP 639's fields need Metadata-Version 2.4; without a license the older version says no less.
    lines = [f"Metadata-Version: {'2.4' if licenses.files else '2.1'}", f"Name: {name}", f"Version: {settings.version}",
             f"Summary: {settings.summary} (installs the {default} build{' on Linux' if others else ''}{where})"]
    lines += [f"License-Expression: {licenses.expression}"] if licenses.expression else []
    lines += [f"License-File: {path}" for path in licenses.files]
    lines += [f"Requires-Python: {REQUIRES_PYTHON}", f"Requires-Dist: {name}-{default}=={settings.version}{linux}",
              *(f"Requires-Dist: {name}-{variant}=={settings.version}; sys_platform == \"{marker}\""
                for variant, marker in others),
              "Description-Content-Type: text/markdown", "", f"# {name}", "",
              "One distribution per ROCm major" + (" and per other system" if others else "") + ", all installing "
              f"the import package `{settings.import_package}`: install exactly one.", ""]
    lines += [f"- ROCm with `{soname}`: `pip install {settings.install_name(variant)}` (`{name}-{variant}`)"
              for variant, soname in settings.rocm_variants]
    lines += [f"- {platform.capitalize()}: `pip install {name}` installs `{name}-{variant}` there"
              for platform, variant in settings.platform_variants]
    lines += ["", f"{'On Linux this' if others else 'This'} package installs `{name}-{default}`. For another ROCm, "
              "install that variant by its own "
              f"name instead, in an environment without `{name}`.", "", *onnxruntime_words(settings), "",
              f"`python -m {settings.import_package}` says whether a machine can run the EP, and what it lacks."]
    return "\n".join(lines) + "\n"


def _record_line(name: str, data: bytes) -> str:
    return f"{name},{record_hash(data)},{len(data)}"


def meta_wheel_bytes(settings: WheelSettings, epoch: int, licenses: Licenses | None = None) -> tuple[str, bytes]:
    """(file name, bytes) of the meta-package's wheel, carrying `licenses`."""
    if not settings.rocm_variants:
        raise ToolkitError(f"{settings.distribution}: the recipe's [wheel] has no rocm_variants, so there is no "
                           f"meta-package to write", hint="add [wheel.rocm_variants] (variant = HIP soname)")
    stem = f"{_file_stem(settings.distribution)}-{settings.version}"
    info = f"{stem}.dist-info"
    files = {f"{info}/METADATA": metadata_text(settings, licenses).encode(),
             **{f"{info}/licenses/{path}": data for path, data in (licenses or Licenses()).files.items()},
             f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: ort-amdgpu-toolkit\nRoot-Is-Purelib: true\n"
                              f"Tag: {TAG}\n".encode()}
    record = "\n".join([*(_record_line(n, d) for n, d in sorted(files.items())), f"{info}/RECORD,,"]) + "\n"
    files[f"{info}/RECORD"] = record.encode()
    stamp = time.gmtime(max(epoch, 315532800))[:6]  # zip dates start in 1980
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files, key=lambda n: n.endswith("/RECORD")):  # RECORD last, as installers expect
            member = zipfile.ZipInfo(name, date_time=stamp)
            member.external_attr = 0o644 << 16
            member.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(member, files[name])
    return f"{stem}-{TAG}.whl", out.getvalue()


# The last second a zip entry's date can hold (2107-12-31T23:59:59Z).
ZIP_LAST = 4354819199


def write_meta_wheel(settings: WheelSettings, out_dir: Path, source_date_epoch: str | None = None) -> Path:
    """Write the meta-package's wheel into out_dir (made when missing); every failure is one error line. Its
    entries are dated by `source_date_epoch` (a release's), else $SOURCE_DATE_EPOCH, else 1980."""
    text = source_date_epoch or os.environ.get("SOURCE_DATE_EPOCH", "") or "0"
    if not text.isdigit() or int(text) > ZIP_LAST:
        raise ToolkitError(f"env SOURCE_DATE_EPOCH={shorten(text, 40)!r}: expected seconds since 1970 (digits "
                           f"only, at most {ZIP_LAST}: the last date a zip entry holds, 2107-12-31)")
    epoch = int(text)
    out_dir = Path(out_dir)
    name, data = meta_wheel_bytes(settings, epoch, variant_licenses(settings, out_dir))
    if out_dir.exists() and not out_dir.is_dir():
        raise ToolkitError(f"meta-wheel --out {shorten(out_dir, 200)}: is a file, not a folder")
    path = out_dir / name
    try:
        atomic_write_bytes(path, data)
    except OSError as exc:
        raise ToolkitError(f"meta-wheel --out {shorten(out_dir, 200)}: cannot write {name} there "
                           f"({exc.strerror or exc}); give a folder you can write to") from None
    return path
