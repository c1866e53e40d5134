"""Smoke check of installed plugin EP packages, run by the python of a fresh venv.

Standalone on purpose: it uses only the standard library, onnxruntime, onnx and numpy, so it tests
the wheel as a user gets it and not the toolkit around it. Steps, each printed as PASS/FAIL/SKIP:
import the package; read its library paths and EP names; register each EP library with ORT; list
the EP devices the registration added; confirm our entry points ran (our libraries are mapped, and
the expected log lines appeared on stderr); when one of those devices is a GPU, run a MatMul+Relu
model on it with CPU fallback disabled and compare with the CPU EP. Exit status 1 on any failure.

    python smoke_check.py --package onnxruntime_ep_amdgpu \
        --env 'AMDGPU_MIGRAPHX_EP_LIBRARY={library:onnxruntime_ep_webgpu}' --env AMDGPU_EP_VERBOSE=1 \
        --expect-log '^\\[amdgpu-ep\\] forwarded [1-9]' [--require-gpu]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import re
import sys
import tempfile
import traceback
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the venv's packages; onnxruntime has no type information, so mypy reads these as Any
    import numpy as np
    import numpy.typing as npt
    from onnxruntime import InferenceSession, OrtEpDevice

# `{library:MODULE}` in a smoke env value: MODULE.get_library_path() in the venv under test. Written here alone:
# the smoke runs resolve_placeholders in that venv (smoke_selfcheck.resolve_env) and reads the pattern from here.
PLACEHOLDER = re.compile(r"\{library:([A-Za-z_][A-Za-z0-9_.]*)\}")


def resolve_placeholders(value: str) -> str:
    """`value` with each `{library:MODULE}` replaced by MODULE.get_library_path()."""
    return PLACEHOLDER.sub(lambda match: str(importlib.import_module(match.group(1)).get_library_path()), value)


class Checker:
    def __init__(self) -> None:
        self.failures = 0

    def ok(self, message: str) -> None:
        print(f"PASS {message}", flush=True)

    def fail(self, message: str) -> None:
        self.failures += 1
        print(f"FAIL {message}", flush=True)

    def skip(self, message: str) -> None:
        print(f"SKIP {message}", flush=True)


class StderrCapture:
    """Send fd 2 to a file while ORT and the EP libraries run: their C-level log lines are evidence."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile(mode="w+b")
        self.saved: int | None = None

    def __enter__(self) -> StderrCapture:
        sys.stderr.flush()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stderr.flush()
        if self.saved is not None:
            os.dup2(self.saved, 2)
            os.close(self.saved)

    def text(self) -> str:
        self.file.seek(0)
        return self.file.read().decode("utf-8", "replace")


def resolve_env(assignments: list[str], check: Checker) -> None:
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name:
            check.fail(f"env: expected NAME=VALUE, got {item!r}")
            continue
        try:
            resolved = resolve_placeholders(value)
        except Exception as exc:  # the named package is missing or broken: say which
            check.fail(f"env {name}: cannot resolve {value!r}: {type(exc).__name__}: {exc}")
            continue
        os.environ[name] = resolved
        check.ok(f"env {name}={resolved}")


def package_components(name: str, check: Checker) -> list[tuple[str, str]]:
    """(library path, EP name) of each registrable library of an installed EP package."""
    try:
        package = importlib.import_module(name)
    except Exception as exc:
        check.fail(f"import {name}: {type(exc).__name__}: {exc}")
        return []
    check.ok(f"import {name} from {os.path.dirname(package.__file__ or '')}")
    try:
        paths = list(package.get_library_paths())
        names = list(package.get_ep_names())
        main_path, main_name = package.get_library_path(), package.get_ep_name()
    except Exception as exc:
        check.fail(f"{name}: get_library_path(s)/get_ep_name(s): {type(exc).__name__}: {exc}")
        return []
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        check.fail(f"{name}.get_library_paths(): missing files {missing}")
    elif main_path not in paths or main_name not in names:
        check.fail(f"{name}: get_library_path()/get_ep_name() ({main_path}, {main_name}) not among the lists")
    else:
        check.ok(f"{name}: libraries {[os.path.basename(p) for p in paths]}, EP names {names}")
    if hasattr(package, "get_components"):
        return [(path, ep) for path, ep in package.get_components() if ep is not None]
    return [(main_path, main_name)]


def device_key(device: OrtEpDevice) -> tuple[str, str, str, int, int]:
    hw = device.device
    return (device.ep_name, device.ep_vendor, str(hw.type), hw.vendor_id, hw.device_id)


def describe(device: OrtEpDevice) -> str:
    hw = device.device
    return (f"{device.ep_name} {hw.type.name} vendor={hw.vendor!r} "
            f"vendor_id={hw.vendor_id:#06x} device_id={hw.device_id:#06x}")


def mapped_files() -> set[str]:
    paths = set()
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5].startswith("/"):
                paths.add(os.path.realpath(fields[5].strip()))
    return paths


def matmul_relu_model(onnx: ModuleType) -> tuple[bytes, npt.NDArray[np.float32]]:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    weight = rng.standard_normal((8, 16)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Relu", ["mm"], ["y"])],
        "smoke_matmul_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [numpy_helper.from_array(weight, "w")],
    )
    # An old opset and IR version so any ORT a user may have (1.22 and later) loads it.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(model)
    return model.SerializeToString(), rng.standard_normal((4, 8)).astype(np.float32)


def device_session(ort: ModuleType, model: bytes, device: OrtEpDevice, provider_options: dict[str, str],
                   session_config: dict[str, str]) -> InferenceSession:
    options = ort.SessionOptions()
    # Without this ORT quietly runs what the device EP refuses on the CPU, and the check proves nothing.
    options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    for key, value in session_config.items():
        options.add_session_config_entry(key, value)
    options.add_provider_for_devices([device], provider_options)
    return ort.InferenceSession(model, sess_options=options)


def run_on_device(ort: ModuleType, onnx: ModuleType, device: OrtEpDevice, atol: float, rtol: float, check: Checker,
                  provider_options: dict[str, str], session_config: dict[str, str]) -> None:
    import numpy as np

    model, x = matmul_relu_model(onnx)
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    session = device_session(ort, model, device, provider_options, session_config)
    providers = session.get_providers()
    # An umbrella EP hands the session to a backend, whose OrtEp (and name) runs it; with CPU fallback off,
    # any EP other than the CPU's ran every node on the device.
    if providers[0] == "CPUExecutionProvider":
        check.fail(f"model session on {describe(device)} uses {providers}")
    else:
        check.ok(f"session on {describe(device)} with provider options {provider_options} and "
                 f"{session_config} runs on {providers[0]}")
    got = session.run(None, {"x": x})[0]
    del session
    if got.shape != expected.shape:
        check.fail(f"MatMul+Relu on {describe(device)}: shape {got.shape}, CPU gives {expected.shape}")
    elif not np.allclose(got, expected, atol=atol, rtol=rtol):
        worst = float(np.max(np.abs(got - expected)))
        check.fail(f"MatMul+Relu on {describe(device)}: max |diff| {worst:.3g} vs CPU exceeds atol={atol} rtol={rtol}")
    else:
        worst = float(np.max(np.abs(got - expected)))
        check.ok(f"MatMul+Relu on {describe(device)} matches the CPU EP (max |diff| {worst:.3g})")


def wrong_session(ort: ModuleType, onnx: ModuleType, device: OrtEpDevice, provider_options: dict[str, str],
                  pattern: str, check: Checker) -> None:
    model, _ = matmul_relu_model(onnx)
    try:
        device_session(ort, model, device, provider_options, {})
    except Exception as exc:
        # onnxruntime's Python session retries a failed EP on the CPU and raises the retry's error, with the
        # EP's own error as its cause: the EP's message is somewhere along that chain.
        chain: list[str] = []
        link: BaseException | None = exc
        while link is not None and len(chain) < 8:
            chain.append(str(link).strip())
            link = link.__cause__ or link.__context__
        found = next((m for m in chain if re.search(pattern, m)), None)
        if found is not None:
            check.ok(f"provider options {provider_options} fail as expected: {found}")
        else:
            check.fail(f"provider options {provider_options} fail, but not with /{pattern}/: {' <- '.join(chain)}")
        return
    check.fail(f"provider options {provider_options} were accepted; expected an error matching /{pattern}/")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--package", action="append", required=True, help="import package of an EP wheel")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE, {library:MODULE} resolved")
    parser.add_argument("--expect-log", action="append", default=[], help="regex stderr must match (multiline)")
    parser.add_argument("--require-gpu", action="store_true", help="fail when no GPU device is offered")
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--provider-option", action="append", default=[], help="KEY=VALUE for the device session")
    parser.add_argument("--session-config", action="append", default=[], help="KEY=VALUE session config entry")
    parser.add_argument("--wrong-provider-option", action="append", default=[],
                        help="KEY=VALUE that must make session creation fail")
    parser.add_argument("--wrong-error", help="regex the failure of the wrong session must match")
    parser.add_argument("--selfcheck-exit", type=int, help="the exit status of the wheel's self-check here")
    parser.add_argument("--selfcheck-verdict", default="", help="the self-check's verdict line")
    return parser.parse_args(argv)


def explained(error: str, verdict: str) -> bool:
    """Whether the self-check's verdict names what made ORT's registration fail: a library the loader's message
    names (libamdhip64.so.6: cannot open shared object file) that the self-check reported missing."""
    named = re.findall(r"(lib[\w.+-]+\.so(?:\.\d+)*)", error)
    return verdict.startswith("not ready:") and any(name in verdict for name in named)


def check_selfcheck(args: argparse.Namespace, failed: list[tuple[str, str]], new_devices: list[OrtEpDevice],
                    check: Checker) -> None:
    """ORT's outcome against the wheel's self-check: a failed registration it explains, the same devices."""
    if args.selfcheck_exit is None:
        return
    for ep_name, error in failed:
        if explained(error, args.selfcheck_verdict):
            check.ok(f"registering {ep_name} fails as the self-check says ({args.selfcheck_verdict})")
        else:
            check.fail(f"register {ep_name}: {error} (the self-check said: {args.selfcheck_verdict})")
    offered = bool(new_devices)
    if offered == (args.selfcheck_exit == 0):
        check.ok(f"self-check exit {args.selfcheck_exit} agrees with ORT ({len(new_devices)} device(s) offered): "
                 f"{args.selfcheck_verdict}")
    else:
        check.fail(f"self-check exit {args.selfcheck_exit} ({args.selfcheck_verdict}) but ORT offered "
                   f"{len(new_devices)} device(s)")


def pairs(items: list[str]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in items)


def register_all(ort: ModuleType, libraries: list[tuple[str, str]], capture: StderrCapture, check: Checker,
                 judged_by_selfcheck: bool = False
                 ) -> tuple[list[tuple[str, str]], list[OrtEpDevice], list[tuple[str, str]]]:
    """Register each EP library; returns those registered, the EP devices the registrations added and the
    failures (EP name, error), which the self-check judges when there is one (else each is a FAIL)."""
    before = {device_key(d) for d in ort.get_ep_devices()}
    registered: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []
    new_devices = []
    with capture:
        for path, ep_name in libraries:
            try:
                ort.register_execution_provider_library(ep_name, path)
                registered.append((path, ep_name))
            except Exception as exc:
                failed.append((ep_name, f"{type(exc).__name__}: {exc}"))
        new_devices = [d for d in ort.get_ep_devices() if device_key(d) not in before]
    for path, ep_name in registered:
        check.ok(f"registered {ep_name} from {path}")
    if not judged_by_selfcheck:
        for ep_name, error in failed:
            check.fail(f"register {ep_name}: {error}")
    return registered, new_devices, failed


def check_registration(registered: list[tuple[str, str]], new_devices: list[OrtEpDevice], check: Checker) -> None:
    """Our entry points ran: each library is mapped, and each device offered is under a registered EP name."""
    mapped = mapped_files()
    for path, ep_name in registered:
        if os.path.realpath(path) in mapped:
            check.ok(f"{os.path.basename(path)} is loaded in this process (CreateEpFactories reached it)")
        else:
            check.fail(f"{os.path.basename(path)} is not loaded after registering {ep_name}")
    if new_devices:
        names = {ep for _, ep in registered}
        for device in new_devices:
            if device.ep_name in names:
                check.ok(f"EP device offered: {describe(device)}")
            else:  # an umbrella must offer its backends' devices under its own name
                check.fail(f"EP device offered under a name not registered here: {describe(device)}")
    else:
        print("INFO the registered libraries offered no EP device", flush=True)


def check_devices(ort: ModuleType, onnx: ModuleType, gpus: list[OrtEpDevice], registered: list[tuple[str, str]],
                  args: argparse.Namespace, capture: StderrCapture, check: Checker) -> None:
    """The model on each GPU device (and the wrong session, when asked), then every library unregistered."""
    with capture:
        if gpus:
            for device in gpus:
                try:
                    run_on_device(ort, onnx, device, args.atol, args.rtol, check,
                                  pairs(args.provider_option), pairs(args.session_config))
                except Exception as exc:
                    check.fail(f"MatMul+Relu on {describe(device)}: {type(exc).__name__}: {exc}")
                if args.wrong_error:
                    wrong_session(ort, onnx, device, pairs(args.wrong_provider_option), args.wrong_error, check)
        gc.collect()
        for _path, ep_name in registered:
            try:
                ort.unregister_execution_provider_library(ep_name)
            except Exception as exc:
                check.fail(f"unregister {ep_name}: {type(exc).__name__}: {exc}")


def check_log(log: str, patterns: list[str], check: Checker) -> None:
    """Show what ORT and the EP libraries wrote to stderr, and match the expected lines in it."""
    if log.strip():
        print("---- stderr of ORT and the EP libraries ----", flush=True)
        print(log.rstrip("\n"), flush=True)
        print("----", flush=True)
    for pattern in patterns:
        if re.search(pattern, log, re.MULTILINE):
            check.ok(f"log matches {pattern!r}")
        else:
            check.fail(f"log has no line matching {pattern!r} (are the entry points called, AMDGPU_EP_VERBOSE=1 set?)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    check = Checker()

    resolve_env(args.env, check)
    try:
        import numpy  # noqa: F401  (the model check needs it; fail here, not halfway)
        import onnx
        import onnxruntime as ort
    except Exception as exc:
        check.fail(f"import onnxruntime/onnx/numpy: {type(exc).__name__}: {exc}")
        return 1
    check.ok(f"onnxruntime {ort.__version__} from {os.path.dirname(ort.__file__)}")

    libraries = [c for name in args.package for c in package_components(name, check)]
    capture = StderrCapture()
    registered, new_devices, failed = register_all(ort, libraries, capture, check, args.selfcheck_exit is not None)
    check_registration(registered, new_devices, check)
    check_selfcheck(args, failed, new_devices, check)

    gpus = [d for d in new_devices if d.device.type.name == "GPU"]
    check_devices(ort, onnx, gpus, registered, args, capture, check)
    if not gpus:
        offered = ", ".join(describe(d) for d in new_devices) or "none"
        why = f"no EP device of type GPU came from {[ep for _, ep in registered]} (devices offered: {offered})"
        if args.require_gpu:
            check.fail(f"device checks required (--require-gpu) but {why}")
        else:
            check.skip(f"device checks skipped: {why}")

    check_log(capture.text(), args.expect_log, check)
    if check.failures:
        print(f"SMOKE FAIL: {check.failures} check(s) failed", flush=True)
        return 1
    print("SMOKE PASS", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        print("SMOKE FAIL: the checker crashed", flush=True)
        sys.exit(1)
