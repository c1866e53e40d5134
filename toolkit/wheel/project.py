"""Generate the scikit-build-core project that packages prebuilt EP libraries into a wheel.

The project is a folder of plain files (pyproject.toml, CMakeLists.txt, README.md, the import package
and a copy of each library), so a failed wheel build can be rerun by hand with `python -m build`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path

from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.util.fsutil import JSON, atomic_write_text
from toolkit.wheel.buildinfo import BuildInfo
from toolkit.wheel.data import install_source, onnxruntime_flavours, read_text
from toolkit.wheel.licenses import copy_carried_licenses, copy_tree_licenses
from toolkit.wheel.linked_licenses import LinkedNotices

# The generated package's Python works on every interpreter ORT supports; the libraries do not use
# the Python ABI, hence one py3-none wheel per platform.
REQUIRES_PYTHON = ">=3.10"
SCIKIT_BUILD_CORE = "scikit-build-core>=1.0"
INFO_FILE = "_wheel_info.json"
# The self-check's modules: the facts, what to do about what is missing, and the report (the command line).
SELFCHECK_FILES = {"_selfcheck.py": "selfcheck.py", "_advice.py": "advice.py", "_report.py": "report.py",
                   "_registration.py": "registration.py", "_windows.py": "windows.py"}


def _template(name: str) -> str:
    return read_text("templates", name)


def _toml_str(value: str) -> str:
    # JSON string escapes are a subset of TOML basic-string escapes.
    return json.dumps(value, ensure_ascii=False)


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"


def _author(name: str | None, email: str | None) -> str:
    return "{ " + ", ".join(f"{key} = {_toml_str(value)}" for key, value in (("name", name), ("email", email))
                            if value is not None) + " }"


# The operating system classifier of a wheel, by the platform its libraries are for (recipe.core.LIBRARY_AFFIXES).
OS_CLASSIFIERS = {"linux": "Operating System :: POSIX :: Linux", "windows": "Operating System :: Microsoft :: Windows"}


def project_metadata(settings: WheelSettings, license_files: tuple[str, ...], platform: str = "linux") -> list[str]:
    """[project]'s license (PEP 639: the expression, and the files scikit-build-core puts in .dist-info/licenses/),
    authors, URLs and classifiers, from the recipe's [wheel], with the classifier of the wheel's platform."""
    lines = [f"license = {_toml_str(settings.license)}"] if settings.license else []
    # Always a list, never scikit-build-core's default globs: what the wheel carries is what the tree has.
    lines.append(f"license-files = {_toml_list(list(license_files))}")
    if settings.authors:
        lines.append(f"authors = [{', '.join(_author(a.name, a.email) for a in settings.authors)}]")
    if settings.urls:
        lines.append("urls = { " + ", ".join(f"{_toml_str(k)} = {_toml_str(v)}" for k, v in settings.urls) + " }")
    lines.append(f"classifiers = {_toml_list(sorted([*settings.classifiers, OS_CLASSIFIERS[platform]]))}")
    return lines


def pyproject_text(settings: WheelSettings, license_files: tuple[str, ...] = (), platform: str = "linux") -> str:
    lines = [
        "[build-system]",
        f"requires = {_toml_list([SCIKIT_BUILD_CORE])}",
        'build-backend = "scikit_build_core.build"',
        "",
        "[project]",
        f"name = {_toml_str(settings.distribution)}",
        f"version = {_toml_str(settings.version)}",
        f"description = {_toml_str(settings.summary)}",
        'readme = { file = "README.md", content-type = "text/markdown" }',
        f"requires-python = {_toml_str(REQUIRES_PYTHON)}",
        *project_metadata(settings, license_files, platform),
        # No ONNX Runtime: it comes in flavours that share the `onnxruntime` module (onnxruntime,
        # onnxruntime-migraphx, ...), and a dependency on one replaces the flavour a user has. The self-check
        # checks the one that is imported against the range instead.
        "dependencies = []",
        *optional_dependencies(settings),
        "",
        "[tool.scikit-build]",
        'minimum-version = "1.0"',
        "wheel.reproducible = true",
        'wheel.py-api = "py3"',
        f"wheel.packages = {_toml_list(['src/' + settings.import_package])}",
        'build-dir = "build"',
        "",
    ]
    return "\n".join(lines)


def optional_dependencies(settings: WheelSettings) -> list[str]:
    """[project]'s optional-dependencies: the recipe's extras this wheel offers (Provides-Extra, and Requires-Dist
    with the extra's marker)."""
    if not settings.extras:
        return []
    return ["optional-dependencies = { " + ", ".join(f"{_toml_str(e.name)} = {_toml_list(list(e.requires))}"
                                                     for e in settings.extras) + " }"]


def extra_words(settings: WheelSettings) -> list[str]:
    """The page's line for each extra: the command that installs it with the wheel, and what it brings."""
    return [f"`pip install '{settings.distribution}[{e.name}]'` installs {', '.join(f'`{r}`' for r in e.requires)} "
            f"with it: {e.summary}." for e in settings.extras]


def readme_text(settings: WheelSettings, components: tuple[Component, ...], info: BuildInfo) -> str:
    """The long description, the index page: how to use the EP first (a snippet tests run as printed), what the
    machine needs, the self-check, then the build facts."""
    def listing(values: tuple[str, ...]) -> str:
        return ", ".join(values) if values else "none"

    rows = [
        f"# {settings.distribution}",
        "",
        settings.summary + ".",
        "",
        "## Use it",
        "",
        "Register the EP with ONNX Runtime, then give a session its devices:",
        "",
        "```python",
        *usage_snippet(settings),
        "```",
        "",
        "The registration name is the EP name: ORT names the devices after it, so registering the library under "
        "another name finds none of them.",
        "",
        "## What it needs",
        "",
        f"- {rocm_need(info)}",
        *(f"- {line}" for line in onnxruntime_words(settings)),
        *(f"- {line}" for line in extra_words(settings)),
        "",
    ]
    if settings.variant:
        rows += [*variant_words(settings, info), ""]
    rows += ["## Check a machine", "", "```sh", f"python -m {settings.import_package}", "```", "",
             "says whether this machine can run the EP and, when it cannot, what to install or change.", ""]
    rows += [
        "## Build",
        "",
        f"- Upstream commit: {info.upstream_commit or 'not known (a local tree or an archive of no known commit)'}",
        f"- Source revision: {info.source_revision}",
        f"- Patches applied: {listing(info.patches)}",
        f"- Features: {listing(info.features)}",
        f"- ROCm version: {info.rocm_version or 'none (built without ROCm)'}",
        f"- For ROCm: {rocm_words(info)}",
        f"- GPU targets: {listing(info.gpu_targets)}",
        f"- Compiler: {toolchain_words(info.toolchain)}",
        f"- ROCm libraries it links (not bundled; the machine's ROCm install provides them): "
        f"{listing(info.rocm_libraries)}",
        "",
        "## Libraries, and what each needs at run time",
        "",
    ]
    for c in components:
        what = f"EP `{c.ep_name}`" if c.ep_name else "backend" if c.plugin else LOADED_LIBRARY
        rows.append(f"- `{c.file(info.platform)}` ({what})" + (f": {c.runtime}" if c.runtime else ""))
    return "\n".join([*rows, ""])


def usage_snippet(settings: WheelSettings) -> list[str]:
    """The page's first lines of code: tests/wheel/test_readme_snippet.py runs them, as printed, beside a model.onnx."""
    return [
        "import onnxruntime as ort",
        f"import {settings.import_package} as ep",
        "",
        "devices = ep.register_execution_provider_library()  # registered under ep.get_ep_name(); [] without a GPU",
        "options = ort.SessionOptions()",
        "if devices:",
        "    options.add_provider_for_devices(devices, {})",
        'session = ort.InferenceSession("model.onnx", sess_options=options)  # without devices: ORT\'s CPU EP',
        "print(ep.get_ep_name(), len(devices), session.get_providers())",
    ]


def rocm_need(info: BuildInfo) -> str:
    """The ROCm the machine needs, by major: the one whose HIP runtime the libraries link."""
    majors = sorted({soname.rsplit(".so.", 1)[1].split(".")[0] for soname in info.rocm_libraries
                     if soname.startswith("libamdhip64.so.")})
    if majors:
        return (f"ROCm {' or '.join(majors)} (its HIP runtime, {listing_or_none(info.rocm_libraries)}), and an AMD "
                "GPU it supports.")
    if info.rocm_libraries:
        return f"A ROCm install that provides {listing_or_none(info.rocm_libraries)}, and an AMD GPU."
    return "No ROCm library: the libraries link none (what they load at run time is listed below)."


def listing_or_none(values: tuple[str, ...]) -> str:
    return ", ".join(values) if values else "none"


# A component that is no plugin EP (hip-ep's compiler): what the description and the self-check call it.
LOADED_LIBRARY = "a library the EP loads, not an EP"


def onnxruntime_words(settings: WheelSettings) -> list[str]:
    """Which ONNX Runtime the wheel needs and how to get one: it installs none itself."""
    flavours = ", ".join(f"`{f['distribution']}` ({f['what']})" for f in onnxruntime_flavours())
    return [f"Needs ONNX Runtime `{settings.onnxruntime}` (the plugin EP API), from whichever distribution provides "
            f"the `onnxruntime` module: {flavours}. This wheel does not depend on one, so it never replaces the "
            f"ONNX Runtime an environment has; without one, `pip install 'onnxruntime{settings.onnxruntime}'`."]


def variant_words(settings: WheelSettings, info: BuildInfo) -> list[str]:
    """Which distribution to install for which ROCm: the variants share the import package, so one at a time."""
    rows = [f"This is the `{settings.variant}` variant, for machines whose ROCm provides "
            f"{', '.join(info.rocm_libraries) or 'no ROCm library'}. Install exactly one variant:", ""]
    return rows + [f"- ROCm with `{soname}`: `pip install {settings.install_name(name)}`"
                   for name, soname in settings.rocm_variants]


def rocm_words(info: BuildInfo) -> str:
    """Which ROCm the wheel is for, from the variant (the HIP soname linked) and the HIP headers compiled against."""
    if info.rocm_variant:
        hip = f", compiled against HIP {info.hip_version}" if info.hip_version else ""
        return f"{info.rocm_variant} (links {', '.join(info.rocm_libraries)}{hip})"
    if info.rocm_libraries:
        return f"the ROCm that provides {', '.join(info.rocm_libraries)}"
    return "any (links no ROCm library)"


def toolchain_words(identity: JSON | None) -> str:
    if not identity or identity.get("name") != "zig":
        return "the build machine's C/C++ compilers"
    return (f"zig {identity['version']} for {identity['target']} (glibc {identity['glibc_floor']} symbols at most), "
            f"{identity['cxx_runtime']}")


def wheel_info(components: tuple[Component, ...], info: BuildInfo, settings: WheelSettings,
               needs: dict[str, tuple[str, ...]] | None = None,
               external: dict[str, tuple[str, ...]] | None = None) -> JSON:
    """_wheel_info.json: what the package's functions and its self-check (_selfcheck.py) read. `needs`: the ROCm
    sonames each library links (its ELF NEEDED entries, read at build time)."""
    needs, external = needs or {}, external or {}
    # Libraries left external that are not ROCm (the recipe's excludes): the self-check looks them up and loads them
    # as it does ROCm's, under their own heading.
    others = sorted({name for names in external.values() for name in names})
    outside = sorted({*info.rocm_libraries, *others, *(name for c in components for name in c.dlopens)})
    return {
        "distribution": settings.distribution,
        "import_package": settings.import_package,
        "version": settings.version,
        "rocm_variant": settings.variant,
        "rocm_variants": dict(settings.rocm_variants),
        "meta_distribution": settings.base_distribution,
        "feature_suffix": settings.feature_suffix,
        "default_variant": settings.default_variant,
        "onnxruntime": settings.onnxruntime,
        "onnxruntime_flavours": onnxruntime_flavours(),
        "trace_env": settings.trace_env,
        "install": {name: install_source(name) for name in outside},
        "components": [{"file": c.file(info.platform), "ep_name": c.ep_name, "plugin": c.plugin,
                        "feature": c.feature, "runtime": c.runtime, "runpath": list(c.runpath),
                        "rocm_needed": list(needs.get(c.file(info.platform), ())),
                        "external_needed": list(external.get(c.file(info.platform), ())),
                        "dlopens": list(c.dlopens)}
                       for c in components],
        "build": info.to_dict(),
        "test_build": settings.test_build(info.features),
        "external_libraries": others,
        "no_device": settings.no_device.to_json() if settings.no_device else None,
        "real_build": settings.real_build,
    }


def generate_project(
    settings: WheelSettings,
    components: tuple[Component, ...],
    lib_dir: Path,
    info: BuildInfo,
    dest: Path,
    needs: dict[str, tuple[str, ...]] | None = None,
    source_dir: Path | None = None,
    external: dict[str, tuple[str, ...]] | None = None,
    dep_dirs: Mapping[str, Path] | None = None,
    linked: LinkedNotices | None = None,
) -> Path:
    """Write the project into `dest` (which must not exist yet) and return it; `source_dir`: the EP's source tree,
    whose license files the wheel carries; `dep_dirs`: the build's fetched dependencies by name, where the license
    texts of the libraries it carries are; `linked`: the license files of other projects' code in the libraries."""
    dest = Path(dest)
    dest.mkdir(parents=True)
    package = dest / "src" / settings.import_package
    libs = dest / "libs"
    libs.mkdir()
    files = [c.file(info.platform) for c in components]
    for name in files:
        shutil.copyfile(Path(lib_dir) / name, libs / name)
    library_files = "\n".join(f'    "libs/{name}"' for name in files)
    cmake = _template("CMakeLists.txt.in")
    cmake = cmake.replace("@LIBRARY_FILES@", library_files).replace("@IMPORT_PACKAGE@", settings.import_package)
    atomic_write_text(dest / "CMakeLists.txt", cmake)
    license_files = copy_tree_licenses(source_dir, dest) if source_dir is not None else ()
    license_files += copy_carried_licenses(components, info.platform, dep_dirs or {}, dest)
    for relative, data in sorted((linked.files if linked else {}).items()):
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        (dest / relative).write_bytes(data)
        license_files += (relative,)
    atomic_write_text(dest / "pyproject.toml", pyproject_text(settings, license_files, info.platform))
    atomic_write_text(dest / "README.md", readme_text(settings, components, info))
    init = _template("package_init.py").replace("@IMPORT_PACKAGE@", settings.import_package)
    atomic_write_text(package / "__init__.py", init, mode=0o644)
    # The self-check: `python -m <package>` and check(), standard library only (templates/selfcheck.py).
    main = _template("package_main.py").replace("@IMPORT_PACKAGE@", settings.import_package)
    atomic_write_text(package / "__main__.py", main, mode=0o644)
    for shipped, template in SELFCHECK_FILES.items():
        atomic_write_text(package / shipped, _template(template), mode=0o644)
    info_json = json.dumps(wheel_info(components, info, settings, needs, external), indent=2, sort_keys=True) + "\n"
    atomic_write_text(package / INFO_FILE, info_json, mode=0o644)
    return dest
