"""A provenance record for a release: what went in (sources and patches with checksums), with which
tools, by which commands, and what came out (the wheels' hashes).

The record is an in-toto Statement (v1) carrying a SLSA Provenance v1 predicate, so existing verifiers
can read it. A build function reports its facts as a plain dict:

    {"sources":  [{"name": "umbrella-ep", "uri": "https://...tar.gz", "sha256": "<64 hex>"}],
     "patches":  [{"name": "0001-rename.patch", "sha256": "<64 hex>"}],
     "commands": [["cmake", "-S", "...", "-B", "..."], ...],
     "toolchain": {"python": "Python 3.12.3"},          # optional; overrides what is detected here
     "upstream_commit": "<40 hex>", "hip_version": "6.4.43484", "rocm_variant": "rocm6"}   # optional
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from toolkit import __version__
from toolkit.util.argcheck import is_sha256
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.util.process import run
from toolkit.util.redact import redact_tree

TOOLS_FILE = Path(__file__).resolve().parent / "toolchain.json"
BUILD_TYPE = "urn:ort-amdgpu-toolkit:release:v1"
# Build facts (toolkit/pipeline/build.py's build_facts, the wheel's get_build_info()) a build's record carries.
BUILT_FROM = ("upstream_commit", "hip_version", "rocm_version", "rocm_variant")


def collect_toolchain(tools_file: Path = TOOLS_FILE, env: Mapping[str, str] | None = None) -> dict[str, JSON | None]:
    """Each tool's resolved path and version line(s); None for a tool that is not installed. `env` is what the
    release adds to its builds' environment: the tools are asked as its builds run them."""
    spec = json.loads(Path(tools_file).read_text(encoding="utf-8"))["tools"]
    environ = {**os.environ, **(env or {})}
    out: dict[str, JSON | None] = {}
    for tool in spec:
        command = list(tool["command"])
        if tool.get("env") and environ.get(tool["env"]):
            # CC/CXX may carry flags ("ccache gcc"); the first word that is not a launcher is the compiler.
            command[0] = shlex.split(environ[tool["env"]])[-1]
        if tool["name"] == "python":
            command[0] = sys.executable
        path = shutil.which(command[0])
        if path is None:
            out[tool["name"]] = None
            continue
        tool_env = dict(environ)
        for key, value in tool.get("set_env", {}).items():
            tool_env.setdefault(key, value)
        try:
            proc = run([path, *command[1:]], check=False, timeout=60, env=tool_env)
        except ToolkitError as exc:  # it cannot start, or hangs
            out[tool["name"]] = {"path": path, "version": None, "error": exc.message}
            continue
        lines = [line.strip() for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
        out[tool["name"]] = {"path": path, "version": "; ".join(lines[: tool.get("lines", 1)]) or None}
    return out


def _digest(item: JSON, what: str, where: str) -> str:
    digest = item.get("sha256")
    if not isinstance(digest, str) or not is_sha256(digest):
        raise ToolkitError(f"{where}: {what} {item.get('name')!r} has no valid sha256 ({digest!r})",
                           hint="a release records only verified inputs: give every source and patch "
                                "its sha256 (64 lower-case hex digits)")
    return digest



def build_statement(builds: list[JSON], toolchain: JSON, started: str | None, finished: str | None,
                    recipe: str | None = None, extra_subjects: tuple[tuple[str, str], ...] = ()) -> JSON:
    """The provenance statement for a set of builds.

    Each build is {"entry": {...matrix entry...}, "wheel": name, "sha256": hex, "facts": {...}};
    `extra_subjects` (name, sha256) are files the release wrote without a build (the meta-package).
    """
    subjects = [{"name": name, "digest": {"sha256": digest}} for name, digest in extra_subjects]
    dependencies: dict[str, JSON] = {}
    per_build = []
    for build in builds:
        where = f"build facts of {build['entry']['id']}"
        facts = build["facts"] or {}
        subjects.append({"name": build["wheel"], "digest": {"sha256": build["sha256"]}})
        for source in facts.get("sources", []):
            digest = _digest(source, "source", where)
            uri = source.get("uri") or source.get("url") or source.get("path") or ""
            dependencies.setdefault(f"source:{source.get('name')}:{digest}", {
                "name": str(source.get("name")), "uri": str(uri), "digest": {"sha256": digest},
                "annotations": {"kind": "source"}})
        for patch in facts.get("patches", []):
            digest = _digest(patch, "patch", where)
            dependencies.setdefault(f"patch:{patch.get('name')}:{digest}", {
                "name": str(patch.get("name")), "digest": {"sha256": digest},
                "annotations": {"kind": "patch"}})
        for dep in facts.get("fetchcontent", []):
            pins = {"sha256": dep["sha256"]} if dep.get("sha256") else {}
            if dep.get("content"):
                pins["toolkit-tree-sha256"] = dep["content"]
            dependencies.setdefault(f"fetchcontent:{dep['name']}:{dep.get('content')}", {
                "name": str(dep["name"]), "uri": str(dep["url"]), "digest": pins,
                "annotations": {"kind": "fetchcontent", "version": str(dep.get("version"))}})
        commands = [c if isinstance(c, str) else shlex.join(map(str, c)) for c in facts.get("commands", [])]
        per_build.append({
            "entry": build["entry"]["id"],
            "wheel": build["wheel"],
            "commands": commands,
            "toolchain": facts.get("toolchain", {}),
            # What the wheel was built from and for: the upstream commit, the HIP headers, the ROCm variant.
            **{key: facts[key] for key in BUILT_FROM if facts.get(key)},
            **({"build_root": facts["build_root"]} if facts.get("build_root") else {}),
            **({"tools": facts["tools"]} if facts.get("tools") else {}),
        })
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": subjects,
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {"recipe": recipe, "entries": [b["entry"] for b in builds]},
                "internalParameters": {"toolchain": toolchain, "builds": per_build},
                "resolvedDependencies": [dependencies[k] for k in sorted(dependencies)],
            },
            "runDetails": {
                "builder": {"id": f"ort-amdgpu-toolkit@{__version__}"},
                # No times in a reproducible release (started None): a rebuild gives the same record.
                "metadata": {"startedOn": started, "finishedOn": finished} if started else {},
            },
        },
    }


def render(statement: JSON) -> str:
    # No credential reaches the file: every URL in it (sources, dependencies, commands) is redacted.
    return json.dumps(redact_tree(statement), indent=2) + "\n"
