"""Every environment variable the toolkit reads or sets, and those the built libraries read at run time: one
table, rendered into docs/reference/environment.md. tests/docs/test_reference.py checks it against the code:
each `TOOLKIT_*` name in toolkit/ and each name read through os.environ is listed here, and each entry's name
occurs in every file it says reads it."""

from __future__ import annotations

from dataclasses import dataclass

TOOLKIT = "toolkit"              # read by the toolkit
SET = "set by the toolkit"      # for the commands it runs (CMake, a root, a container)
SAMPLE = "sample EP"            # read by the bundled sample's libraries at run time
GENAI = "onnxruntime-genai"     # read by onnxruntime-genai's amdgpu provider
SELFCHECK = "wheel self-check"  # read by `python -m <package>` of an installed wheel (templates/selfcheck.py)
TESTS = "tests"


@dataclass(frozen=True)
class EnvVar:
    name: str
    read_by: str
    files: tuple[str, ...]      # where it is read or set (paths relative to the project)
    meaning: str


ENVIRONMENT: tuple[EnvVar, ...] = (
    EnvVar("TOOLKIT_BUILD_DIR", TOOLKIT, ("toolkit/pipeline/workspace.py", "toolkit/buildroot/session.py"),
           "Build folder, where `build/<recipe>/<variant>/` work trees go (default `./build`; `--build-dir` wins)."),
    EnvVar("TOOLKIT_CACHE_DIR", TOOLKIT, ("toolkit/util/cachedir.py",),
           "Download cache, unpacked archives, build roots, ccache and zig's cache (default: the user cache dir)."),
    EnvVar("TOOLKIT_MIRRORS", TOOLKIT, ("toolkit/sources/mirrors.py", "toolkit/buildroot/session.py"),
           "Mirror base URLs tried before upstream, separated by spaces or commas (as `--mirror`); a mirror "
           "keeps upstream's files at `BASE/<host>/<path>`."),
    EnvVar("TOOLKIT_INSECURE_MIRROR", TOOLKIT, ("toolkit/sources/mirrors.py",),
           "`1`: a plain `http://` mirror may serve `https://` URLs (for every command, as `--insecure-mirror` allows "
           "for one); otherwise such a mirror is skipped for them, since what it sends is not authenticated."),
    EnvVar("TOOLKIT_DEBIAN_MIRROR", TOOLKIT, ("toolkit/util/debian_mirror.py",),
           "Debian archive base URL (holding `dists/` and `pool/`) for `debian:` URLs and build roots; default: "
           "the first Debian archive in the machine's apt sources."),
    EnvVar("TOOLKIT_BUILDROOT", TOOLKIT, ("toolkit/buildroot/make.py", "toolkit/cli/root.py"),
           "A build root prepared by hand, used as it is instead of making one."),
    EnvVar("TOOLKIT_IN_IMAGE", SET, ("toolkit/container/rootfs.py",),
           "In a container of a build root (podman running the root's folder, or the root's image from `root image "
           "NAME`): that root's name, so a session can tell where it runs."),
    EnvVar("TOOLKIT_CONTAINER_ENGINE", TOOLKIT, ("toolkit/container/engine.py",),
           "`podman` or `docker` for `container` (`--engine` wins)."),
    EnvVar("TOOLKIT_COMPILE_CACHE", TOOLKIT, ("toolkit/release/compile_cache.py",),
           "Shared ccache storage (`redis://host:port` or `http://...`); overrides `[release] compile_cache`."),
    EnvVar("TOOLKIT_NO_CCACHE", TOOLKIT, ("toolkit/cmake/commands.py",),
           "Set (to anything): never use ccache as the compiler launcher."),
    EnvVar("TWINE_USERNAME", TOOLKIT, ("toolkit/release/publish.py",),
           "The user `publish` uploads as (twine reads it; with `__token__`, TWINE_PASSWORD is an API token). "
           "Set for twine from the userinfo of a `--repository-url` that has one."),
    EnvVar("TWINE_PASSWORD", TOOLKIT, ("toolkit/release/publish.py",),
           "The password or API token `publish` uploads with (twine reads it; else keyring). Never printed: every "
           "line of twine's output is masked. Set for twine from the userinfo of a `--repository-url` that has one."),
    EnvVar("COLUMNS", SET, ("toolkit/release/publish.py", "toolkit/util/process.py"),
           "A wide terminal for twine under `publish`, so each of its messages is one line in an error, and for "
           "`TOOL --version`, so a version line (auditwheel's names its folder) is printed whole under `-v`."),
    EnvVar("ORT_HOME", TOOLKIT, ("toolkit/sources/components.json",),
           "An ONNX Runtime install or unpacked release package (as `--ort-home`)."),
    EnvVar("ROCM_PATH", TOOLKIT, ("toolkit/sources/components.json", "toolkit/binary/hip.py", "toolkit/wheel/rocm.py",
                                  "toolkit/wheel/templates/selfcheck.py"),
           "The ROCm install (as `--rocm-path`); a library under it counts as ROCm when a wheel is repaired; the "
           "wheel's self-check names its `lib/` when the loader does not search it."),
    EnvVar("HIP_PATH", TOOLKIT, ("toolkit/sources/components.json", "toolkit/binary/hip.py"),
           "Where HIP is, when `ROCM_PATH` is not set."),
    EnvVar("MIGRAPHX_HOME", TOOLKIT, ("toolkit/sources/components.json",),
           "The MIGraphX install (as `--migraphx-home`)."),
    EnvVar("DPKG_ROOT", TOOLKIT, ("toolkit/wheel/rocm.py",),
           "The dpkg root whose package database says which files ROCm packages own (default `/`)."),
    EnvVar("SOURCE_DATE_EPOCH", TOOLKIT, ("toolkit/wheel/repair.py", "toolkit/release/sbom.py"),
           "Timestamps in wheels and SBOMs, for byte-identical rebuilds."),
    EnvVar("CC", TOOLKIT, ("toolkit/release/toolchain.json",), "The C compiler release provenance records, when set."),
    EnvVar("CXX", TOOLKIT, ("toolkit/release/toolchain.json",), "The C++ compiler release provenance records."),
    EnvVar("TOOLKIT_IN_CONTAINER", SET, ("toolkit/container/engine.py",), "`1` inside a `container` session."),
    EnvVar("TOOLKIT_RELEASE_ENTRY", SET, ("toolkit/release/in_root.py",),
           "For the release a host release runs in a container of an entry's build root: that entry's id. The "
           "host prints the entry's lines and the result, the release inside neither, so each line comes once."),
    EnvVar("TOOLKIT_HOST_PATHS", SET, ("toolkit/util/hostview.py",),
           "Inside a `container` session: a JSON object mapping each folder mounted at another path (`/work/project`, "
           "`/work/build`, ...) to its host path, so the lines the session prints name the user's paths."),
    EnvVar("TOOLKIT_SOURCE_DIR", SET, ("toolkit/container/engine.py",),
           "Inside a container: where `--source` is mounted (`/work/source`)."),
    EnvVar("TOOLKIT_OUT_DIR", SET, ("toolkit/container/engine.py",),
           "Inside a container: where the session writes its results (`/work/out`)."),
    EnvVar("TOOLKIT_IN_ROOT", SET, ("toolkit/buildroot/session.py", "toolkit/cli/main.py"),
           "Inside a build root: the root's name (a Ctrl-C there is reported by the toolkit outside, once)."),
    EnvVar("TERM", SET, ("toolkit/buildroot/sandbox.py",), "Passed into a build root, for tools' colours."),
    EnvVar("CCACHE_DIR", SET, ("toolkit/pipeline/adapters/derive.py", "toolkit/buildroot/sandbox.py"),
           "ccache's store, in the toolkit cache (`<cache>/ccache`), for host and root builds alike."),
    EnvVar("GIT_CEILING_DIRECTORIES", SET, ("toolkit/pipeline/adapters/derive.py",),
           "For CMake's configure and build steps: the work tree (before any the caller set), so a tree that asks git "
           "for its commit gets none rather than the commit of a checkout the build folder sits in."),
    EnvVar("HIP_PLATFORM", SET, ("toolkit/binary/hip.py",),
           "`amd` for HIP compiles (hipcc would pick nvcc where CUDA is installed)."),
    EnvVar("AMDGPU_EP_PROFILE", SAMPLE, ("samples/umbrella-ep/src/umbrella/profile.h",),
           "Default profile of sessions that set none (else `profile = ...` in `amdgpu-ep.conf` beside the umbrella)."),
    EnvVar("AMDGPU_EP_BACKEND_DIR", SAMPLE, ("samples/umbrella-ep/src/umbrella/umbrella.cc",),
           "Folder of the backend shims (default: beside the umbrella)."),
    EnvVar("AMDGPU_MIGRAPHX_EP_LIBRARY", SAMPLE, ("samples/umbrella-ep/src/migraphx/CMakeLists.txt",),
           "The real EP library the MIGraphX shim loads (default `libonnxruntime_providers_migraphx.so` beside it)."),
    EnvVar("AMDGPU_HIPDNN_EP_LIBRARY", SAMPLE, ("patches/amdgpu-ep/0001-rename-hipep-to-hipdnn.patch",),
           "The real EP library the hipDNN shim loads (`AMDGPU_HIPEP_EP_LIBRARY` in the unpatched tree)."),
    EnvVar("AMDGPU_DIRECTX_EP_LIBRARY", SAMPLE, ("samples/umbrella-ep/src/directx/CMakeLists.txt",),
           "Windows: the real EP DLL the DirectX shim loads (default `onnxruntime_providers_dml.dll` beside it)."),
    EnvVar("AMDGPU_EP_VERBOSE", SAMPLE, ("samples/umbrella-ep/src/common/ep_library.cc",),
           "`1`: one stderr line per load, forwarded factory, offered device, routed session, release, unload."),
    EnvVar("AMDGPU_EP_PATH", GENAI, ("toolkit/smoke/inside/smoke_genai.py",),
           "The umbrella library onnxruntime-genai registers on `append_provider(\"amdgpu\")` when none is "
           "registered (default `./libamdgpu-ep.so`)."),
    EnvVar("ORT_AMDGPU_TRACE_ROUTING", "AMD's EP", (), "`1`: AMD's real umbrella prints how it routes each session."),
    EnvVar("MORPHIZEN_EP_ENABLE_CPU_DEVICE", "ROCm/hip-ep", ("recipes/hip-ep.toml", "tests/support/hip_ep_support.py"),
           "`1`: the HIP EP (`libhipgpu.so`) offers its CPU device too, not AMD GPUs alone: what its tests run "
           "sessions on; the self-check names it when the EP offers no device (`[wheel.no_device]`)."),
    EnvVar("LD_LIBRARY_PATH", SELFCHECK, ("toolkit/wheel/templates/selfcheck.py",),
           "Searched first for the ROCm libraries the wheel links, as the dynamic loader does."),
    EnvVar("CI", TESTS, ("tests/support/tools.py",), "`true`: a test whose tool is missing fails instead of skipping."),
)

# TOOLKIT_* names in the code that are CMake variables (the dependency provider's, toolkit/sources/provider.cmake
# and the map the toolkit writes for it), not environment variables.
CMAKE_VARIABLES: tuple[str, ...] = ("TOOLKIT_PROVIDER_MAP", "TOOLKIT_PROVIDER_REPORT", "TOOLKIT_PROVIDER_SURVEY",
                                    "TOOLKIT_PROVIDER_RECIPE", "TOOLKIT_FC_DIR_", "TOOLKIT_FC_NAMES",
                                    "TOOLKIT_FP_NAMES", "TOOLKIT_FP_SERVED")
