"""One release matrix entry built through the pipeline: its wheel, and the facts its provenance records."""

from __future__ import annotations

from pathlib import Path

from toolkit.cmake.commands import build_command, configure_command, find_cmake, find_ninja
from toolkit.cmake.configure_stage import configure_defines
from toolkit.engine.build import Build
from toolkit.engine.cli import build_argv
from toolkit.engine.options import BuildOptions
from toolkit.engine.pipeline import built_wheels, run_build


def entry_options(recipe_path: Path, entry, no_wait: bool = False) -> BuildOptions:
    """The build options of one entry: its own variant, features and GPU targets, and a local version label
    so that entries never share a wheel name."""
    label = ".".join([entry.target_set, *entry.features]).lower().replace("+", ".").replace("-", ".")
    return BuildOptions(recipe=str(recipe_path), variant=f"release-{entry.id}",
                        with_features=tuple(entry.features), gpu_targets=tuple(entry.gpu_targets),
                        local_version=label, no_wait=no_wait)


def build_release_entry(recipe_path: Path, entry, work_dir: Path, no_wait: bool = False) -> tuple[Path, dict]:
    """Build, package and repair one release matrix entry; returns its wheel and the facts for provenance."""
    options = entry_options(recipe_path, entry, no_wait)
    b, _ = run_build(options, package=True)
    wheels = built_wheels(b)
    patches = [{"name": name, "sha256": sha} for name, sha in b.patch_pins()]
    cmake = find_cmake()
    commands = [
        build_argv(options, "--wheel"),
        configure_command(cmake, b.workspace.source, b.workspace.cmake, b.recipe.build.generator, find_ninja(),
                          configure_defines(b), b.recipe.build.list_defines),
        build_command(cmake, b.workspace.cmake, options.jobs),
    ]
    # The C/C++ toolchain's identity (zig: pinned version, target, wheel sha256), as the configure fingerprint has it.
    return wheels[0], {"sources": [source_record(b)], "patches": patches, "commands": commands,
                       "toolchain": b.toolchain().identity()}


def source_record(b: Build) -> dict:
    if b.source.kind == "path":
        return {"name": b.source_dir.name, "uri": b.source_dir.as_uri(), "sha256": b.source_digest()}
    sha = b.fetch.sha256_for(b.source.url, b.source.sha256) if b.source.url else b.source_digest()
    return {"name": b.source_dir.name, "uri": b.source.url or f"git+{b.source.git}@{b.source.commit}", "sha256": sha}
