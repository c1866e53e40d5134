"""A CycloneDX SBOM for one wheel, read from the wheel file itself.

It lists every file the wheel holds (with its SHA-256) and, for each shared library, the libraries it
needs (ELF DT_NEEDED). A needed library that the wheel does not bundle is recorded as an external
component (CycloneDX 1.7 `isExternal`), tagged `toolkit:provided-by` = `rocm` when repair's rules say it is
ROCm (toolkit/wheel/rocm.py: its name, or, on the build machine, where it resolves or which package owns
it; `toolkit:rocm-rule` then says which) or `system` otherwise (the OS must provide it). That is what a
user needs to know before installing the wheel: which ROCm libraries it expects to find.
"""

from __future__ import annotations

import datetime as _dt
import email.parser
import fnmatch
import json
import os
import tempfile
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from toolkit import __version__
from toolkit.binary.elf import ELF_MAGIC, read_elf
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, sha256_bytes, sha256_file
from toolkit.util.redact import redact_tree
from toolkit.wheel.data import rocm_excludes

SPEC_VERSION = "1.7"
def load_rocm_excludes() -> list[str]:
    """The one ROCm exclude list, shared with wheel repair (toolkit/wheel/data/libraries.json)."""
    return list(rocm_excludes())


@dataclass
class ElfInfo:
    soname: str | None = None
    needed: list[str] = field(default_factory=list)
    runpath: str | None = None


@dataclass
class WheelFile:
    path: str
    sha256: str
    size: int
    elf: ElfInfo | None = None


@dataclass
class WheelContents:
    filename: str
    sha256: str
    name: str
    version: str
    tags: list[str]
    files: list[WheelFile]


def read_wheel(wheel: Path) -> WheelContents:
    wheel = Path(wheel)
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ToolkitError(f"{wheel}: not a readable wheel (zip): {exc}") from None
    with archive:
        files = []
        metadata = wheel_meta = None
        for info in sorted(archive.infolist(), key=lambda i: i.filename):
            if info.is_dir():
                continue
            data = archive.read(info)
            parts = PurePosixPath(info.filename).parts
            if len(parts) == 2 and parts[0].endswith(".dist-info"):
                if parts[1] == "METADATA":
                    metadata = data
                elif parts[1] == "WHEEL":
                    wheel_meta = data
            files.append(WheelFile(info.filename, sha256_bytes(data), len(data), _elf_info(data, wheel,
                                                                                         info.filename)))
    if metadata is None or wheel_meta is None:
        raise ToolkitError(f"{wheel}: no .dist-info/METADATA or WHEEL file: not a wheel")
    meta = email.parser.BytesParser().parsebytes(metadata)
    tags = email.parser.BytesParser().parsebytes(wheel_meta).get_all("Tag") or []
    if not meta.get("Name") or not meta.get("Version"):
        raise ToolkitError(f"{wheel}: METADATA lacks Name or Version")
    return WheelContents(wheel.name, sha256_file(wheel), meta["Name"], meta["Version"], list(tags), files)


def _elf_info(data: bytes, wheel: Path, member: str) -> ElfInfo | None:
    if not data.startswith(ELF_MAGIC):
        return None
    facts = read_elf(data, label=f"{wheel}: member {member}")
    info = ElfInfo()
    info.needed.extend(facts.needed)
    info.soname = facts.soname
    paths = facts.runpath or facts.rpath
    info.runpath = ":".join(paths) if paths else None
    return info


def _purl(name: str, version: str, filename: str) -> str:
    normalized = name.lower().replace("_", "-").replace(".", "-")
    return f"pkg:pypi/{normalized}@{version}?file_name={filename}"


def _timestamp(source_date_epoch: str | None) -> str:
    # SOURCE_DATE_EPOCH (a release's, else this process's) makes the SBOM of a reproducible build byte-identical.
    epoch = source_date_epoch or os.environ.get("SOURCE_DATE_EPOCH")
    moment = (_dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch
              else _dt.datetime.now(_dt.UTC))
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _prop(name: str, value: str) -> dict[str, str]:
    return {"name": name, "value": value}


def wheel_sbom(wheel: Path, excludes: list[str] | None = None, properties: dict[str, str] | None = None,
               inputs: JSON | None = None, source_date_epoch: str | None = None) -> JSON:
    """The SBOM of `wheel` as a CycloneDX 1.7 JSON document (a dict); `inputs` are the build's facts (the
    source tree, its patches, its FetchContent dependencies), listed as the components the wheel was built from."""
    excludes = load_rocm_excludes() if excludes is None else excludes
    contents = read_wheel(wheel)
    root_ref = f"wheel:{contents.filename}"
    bundled = {PurePosixPath(f.path).name: f"file:{f.path}" for f in contents.files}

    components: list[JSON] = []
    dependencies: list[JSON] = [{"ref": root_ref, "dependsOn": [f"file:{f.path}" for f in contents.files]}]
    external: dict[str, JSON] = {}
    by_machine = _rocm_by_place(wheel)
    for f in contents.files:
        component: JSON = {"type": "file", "bom-ref": f"file:{f.path}", "name": f.path,
                     "hashes": [{"alg": "SHA-256", "content": f.sha256}]}
        if f.elf is not None:
            props = [_prop("toolkit:elf:needed", lib) for lib in f.elf.needed]
            if f.elf.soname:
                props.append(_prop("toolkit:elf:soname", f.elf.soname))
            if f.elf.runpath:
                props.append(_prop("toolkit:elf:runpath", f.elf.runpath))
            if props:
                component["properties"] = props
            refs = []
            for lib in f.elf.needed:
                if lib in bundled:
                    refs.append(bundled[lib])
                    continue
                ref = f"external:{lib}"
                refs.append(ref)
                if ref not in external:
                    external[ref] = _external_component(lib, ref, excludes, by_machine.get(lib))
            dependencies.append({"ref": f"file:{f.path}", "dependsOn": sorted(set(refs))})
        components.append(component)
    components.extend(external[ref] for ref in sorted(external))
    dependencies.extend({"ref": ref} for ref in sorted(external))
    built_from = input_components(inputs or {})
    components.extend(built_from)
    dependencies[0]["dependsOn"] += [c["bom-ref"] for c in built_from if c.get("scope") == "required"]

    root_props = [_prop("toolkit:wheel:tag", tag) for tag in contents.tags]
    root_props += build_props(wheel)
    root_props += [_prop(k, v) for k, v in sorted((properties or {}).items())]
    return {
        "$schema": "http://cyclonedx.org/schema/bom-1.7.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        # Derived from the wheel's hash: the same wheel always gets the same serial number.
        "serialNumber": "urn:uuid:" + str(uuid.uuid5(uuid.NAMESPACE_URL, "sha256:" + contents.sha256)),
        "version": 1,
        "metadata": {
            "timestamp": _timestamp(source_date_epoch),
            "tools": {"components": [{"type": "application", "name": "ort-amdgpu-toolkit",
                                      "version": __version__}]},
            "component": {
                "type": "library", "bom-ref": root_ref, "name": contents.name,
                "version": contents.version,
                "purl": _purl(contents.name, contents.version, contents.filename),
                "hashes": [{"alg": "SHA-256", "content": contents.sha256}],
                "properties": [_prop("toolkit:wheel:filename", contents.filename)] + root_props,
            },
        },
        "components": components,
        "dependencies": dependencies,
    }


# The build facts the wheel records (its _wheel_info.json) that say what it was built from and for.
BUILD_PROPS = (("upstream_commit", "toolkit:build:upstream-commit"), ("hip_version", "toolkit:build:hip-version"),
               ("rocm_version", "toolkit:build:rocm-version"), ("rocm_variant", "toolkit:build:rocm-variant"))


def build_props(wheel: Path) -> list[dict[str, str]]:
    """The upstream commit, the HIP version compiled against and the ROCm variant, as the wheel records them."""
    from toolkit.wheel.inspection import read_build_info

    with zipfile.ZipFile(wheel) as archive:
        info = read_build_info(archive) or {}
    return [_prop(name, str(info[key])) for key, name in BUILD_PROPS if info.get(key)]


def input_components(facts: JSON) -> list[JSON]:
    """The source tree, every FetchContent dependency compiled in (version, license, archive sha256, the digest of
    its unpacked tree; one the build only reads has scope "excluded") and the patches applied (build inputs, not
    shipped: scope "excluded")."""
    out: list[JSON] = []
    for source in facts.get("sources", []):
        out.append({"type": "library", "bom-ref": f"source:{source['name']}", "name": str(source["name"]),
                    **({"version": source["version"]} if source.get("version") else {}), "scope": "required",
                    "externalReferences": [{"type": "vcs" if str(source["uri"]).startswith("git+") else "distribution",
                                            "url": str(source["uri"])}],
                    "properties": [_prop("toolkit:role", "source")] + (
                        [_prop("toolkit:tree-sha256", str(source["sha256"]))] if source.get("sha256") else [])})
    for dep in facts.get("fetchcontent", []):
        inside = dep.get("in_wheel", True)
        component: JSON = {"type": "library", "bom-ref": f"fetchcontent:{dep['name']}", "name": dep["name"],
                     "version": dep["version"], "scope": "required" if inside else "excluded",
                     "externalReferences": [{"type": "distribution", "url": dep["url"]}],
                     "properties": [_prop("toolkit:role", "fetchcontent (compiled in)" if inside else
                                          "fetchcontent (read by the build)")]}
        if dep.get("license"):
            component["licenses"] = [{"expression": dep["license"]}]
        if dep.get("content"):
            component["properties"].append(_prop("toolkit:tree-sha256", dep["content"]))
        if dep.get("sha256"):
            component["hashes"] = [{"alg": "SHA-256", "content": dep["sha256"]}]
        purl = _github_purl(dep["url"], dep["version"])
        if purl:
            component["purl"] = purl
        out.append(component)
    for patch in facts.get("patches", []):
        out.append({"type": "file", "bom-ref": f"patch:{patch['name']}", "name": patch["name"], "scope": "excluded",
                    "hashes": [{"alg": "SHA-256", "content": patch["sha256"]}],
                    "properties": [_prop("toolkit:role", "patch"),
                                   _prop("toolkit:patch:phase", patch.get("phase", "base"))]})
    return out


def _github_purl(url: str, version: str) -> str | None:
    parts = url.split("/")
    if len(parts) > 4 and parts[2] == "github.com" and version != "unknown":
        return f"pkg:github/{parts[3].lower()}/{parts[4].lower()}@{version}"
    return None


def _rocm_by_place(wheel: Path) -> dict[str, str]:
    """Needs that are ROCm by where this machine resolves them or the package owning them, not by name."""
    from toolkit.wheel.rocm import Resolver

    with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory(prefix="sbom-") as tmp:
        members = []
        for info in archive.infolist():
            if not info.is_dir() and info.file_size >= 4:
                with archive.open(info) as handle:
                    if handle.read(4) == ELF_MAGIC:
                        members.append(info.filename)
        for member in members:
            archive.extract(member, tmp)
        needs = Resolver().classify(Path(tmp), members)
    return {n.soname: n.reason for n in needs if n.kind == "rocm" and not n.reason.startswith("ROCm by name")}


def _external_component(lib: str, ref: str, excludes: list[str], rocm_rule: str | None = None) -> JSON:
    pattern = next((p for p in excludes if fnmatch.fnmatchcase(lib, p)), None)
    if pattern is not None or rocm_rule is not None:
        description = "ROCm library the wheel needs but does not bundle: the ROCm install provides it"
        props = [_prop("toolkit:provided-by", "rocm")]
        props.append(_prop("toolkit:exclude-pattern", pattern) if pattern
                     else _prop("toolkit:rocm-rule", rocm_rule or ""))
    else:
        description = "System library the wheel needs but does not bundle: the OS provides it"
        props = [_prop("toolkit:provided-by", "system")]
    return {"type": "library", "bom-ref": ref, "name": lib, "scope": "required", "isExternal": True,
            "description": description, "properties": props}


def external_libraries(sbom: JSON, provided_by: str | None = None) -> list[str]:
    """Names of the external components, optionally only those of one provider ("rocm", "system")."""
    out = []
    for c in sbom.get("components", []):
        if not c.get("isExternal"):
            continue
        props = {p["name"]: p["value"] for p in c.get("properties", [])}
        if provided_by is None or props.get("toolkit:provided-by") == provided_by:
            out.append(c["name"])
    return out


def validate(sbom_text: str, where: str) -> None:
    """Check the document against the CycloneDX JSON schema; raise naming the first error."""
    try:
        from cyclonedx.schema import SchemaVersion
        from cyclonedx.validation.json import JsonStrictValidator
    except ImportError:
        raise ToolkitError(f"{where}: cannot validate the SBOM: cyclonedx-python-lib is not installed",
                           hint="pip install 'cyclonedx-python-lib[json-validation]'") from None
    error = JsonStrictValidator(SchemaVersion.V1_7).validate_str(sbom_text)
    if error is not None:
        raise ToolkitError(f"{where}: SBOM does not validate against CycloneDX {SPEC_VERSION}: {error}")


def render(sbom: JSON) -> str:
    # No credential reaches the file: every URL in it (sources, dependencies, commands) is redacted.
    return json.dumps(redact_tree(sbom), indent=2, sort_keys=False) + "\n"
