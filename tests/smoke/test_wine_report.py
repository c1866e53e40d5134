"""How the Windows smoke reads its harness under Wine (toolkit/smoke/wine.py): steps, devices, the EP's log, and
Wine's own messages by step, so a step Wine cannot carry is a STOP naming the call, and anything else a FAIL."""

from __future__ import annotations

from toolkit.smoke.wine import Run, report, windows_path

STDOUT = """ORT 1.32.0 (API 27) from Z:\\ort\\onnxruntime.dll\r
DEVICE AMDGPUExecutionProvider||0x10de|0x06cd|GPU\r
PASS register: AMDGPUExecutionProvider registered from Z:\\site\\amdgpu-ep.dll, 1 device(s)\r
PASS device: GPU  (vendor 0x10de)\r
FAIL session: CPU fallback disabled, the device did not run the model: EP_FAIL\r
"""
STDERR = """0024:fixme:ntdll:init_cpu_info Failed to get logical processor information, status 0xc0000002.
[harness] begin register
0024:fixme:dxcore:DXCoreCreateAdapterFactory riid {78ee5945}, ppv 0000 stub!
[amdgpu-ep] forwarded 1 factory from Z:\\site\\migraphx-backend.dll
[harness] begin session
0024:fixme:dxgi:dxgi_factory_EnumAdapterByGpuPreference Ignoring GPU preference 0x2.
vkd3d:0024:fixme:d3d12_device_CreateSharedHandle iface 0000, object 0000, handle 0000 stub!
"""
FORWARDED = r"^\[amdgpu-ep\] forwarded [1-9]\d* factor(y|ies) from .*[/\\](lib)?migraphx-backend\.(so|dll)$"


def test_steps_devices_log_and_wine_messages_by_step() -> None:
    run = Run.parse("onnxruntime", STDOUT, STDERR, 0)
    assert run.version == "1.32.0"
    assert run.steps["register"][0] == "PASS" and run.steps["session"][0] == "FAIL"
    assert run.devices == ["AMDGPUExecutionProvider||0x10de|0x06cd|GPU"]
    assert run.log == ["[amdgpu-ep] forwarded 1 factory from Z:\\site\\migraphx-backend.dll"]
    assert set(run.wine) == {"start", "register", "session"}
    # The call Wine could not make in the session: the stub it named there, not an earlier one.
    assert run.wine_wall("session", ).startswith("d3d12_device_CreateSharedHandle (vkd3d:0024:fixme:")
    assert run.wine_wall("device") is None


def test_a_step_wine_cannot_carry_is_a_stop_and_the_rest_pass() -> None:
    lines = report(Run.parse("onnxruntime", STDOUT, STDERR, 0), (FORWARDED,))
    assert lines[0].startswith("PASS onnxruntime 1.32.0 register: ")
    assert lines[1] == "  device AMDGPUExecutionProvider||0x10de|0x06cd|GPU"
    assert lines[2] == "PASS onnxruntime 1.32.0 device: GPU  (vendor 0x10de)"
    assert lines[3].startswith("STOP onnxruntime 1.32.0 session: Wine cannot carry it: d3d12_device_CreateSharedHandle")
    assert not any(line.startswith("FAIL") for line in lines)


def test_a_failure_wine_said_nothing_about_is_the_wheels() -> None:
    quiet = "\n".join(line for line in STDERR.splitlines() if "stub" not in line)
    lines = report(Run.parse("onnxruntime", STDOUT, quiet, 0), (FORWARDED,))
    assert "FAIL onnxruntime 1.32.0 session: CPU fallback disabled, the device did not run the model: EP_FAIL" in lines


def test_a_missing_log_line_or_no_registration_fails() -> None:
    lines = report(Run.parse("onnxruntime", STDOUT, STDERR, 0), (r"^\[migraphx-backend\] forwarded",))
    assert lines[-1] == "FAIL onnxruntime: no EP log line matches '^\\\\[migraphx-backend\\\\] forwarded'"
    lines = report(Run.parse("onnxruntime", "", "wine: could not load harness.exe\n", 53), ())
    assert lines == ["FAIL onnxruntime: the harness exited 53 before registering: wine: could not load harness.exe"]


def test_windows_paths_are_on_wines_drive_z() -> None:
    from pathlib import Path

    assert windows_path(Path("/root/.cache/x/amdgpu-ep.dll")) == "Z:\\root\\.cache\\x\\amdgpu-ep.dll"


def test_a_step_the_process_died_in_is_a_stop_naming_wines_stub_or_else_a_fail() -> None:
    # AMD's DirectX EP under Wine 10: DXCoreCreateAdapterFactory is a stub, the EP throws, and the exception leaves
    # ORT's C API, so the process ends in std::terminate before the harness prints the session's verdict.
    stdout = "\n".join(STDOUT.splitlines()[:4]) + "\n"
    died = """[harness] begin register
[harness] begin session
0024:fixme:dxcore:DXCoreCreateAdapterFactory riid {78ee5945-c36e-4b13-a669-005dd11c0f06}, ppv 0000 stub!
terminate called after throwing an instance of 'std::runtime_error'
  what():  DXCore is not available on this platform.
"""
    lines = report(Run.parse("onnxruntime", stdout, died, 3), ())
    assert lines[-1] == ("STOP onnxruntime 1.32.0 session: Wine cannot carry it: DXCoreCreateAdapterFactory "
                         "(0024:fixme:dxcore:DXCoreCreateAdapterFactory riid {78ee5945-c36e-4b13-a669-005dd11c0f06}, "
                         "ppv 0000 stub!); the process ended (exit 3): terminate called after throwing an instance "
                         "of 'std::runtime_error'; what():  DXCore is not available on this platform.")
    quiet = "\n".join(line for line in died.splitlines() if "stub" not in line)
    lines = report(Run.parse("onnxruntime", stdout, quiet, 3), ())
    assert lines[-1].startswith("FAIL onnxruntime 1.32.0 session: the process ended (exit 3): terminate called")


def test_a_decoy_that_was_loaded_fails_the_run() -> None:
    said = STDERR + "[decoy] DirectML.dll loaded from cwd\n[decoy] DirectML.dll loaded from path\n"
    lines = report(Run.parse("onnxruntime", STDOUT, said, 0), ())
    assert lines[-2:] == [
        "FAIL onnxruntime: the decoy DirectML.dll from the working directory was loaded, not the copy the wheel "
        "carries",
        "FAIL onnxruntime: the decoy DirectML.dll from PATH was loaded, not the copy the wheel carries",
    ]
    assert not any(line.startswith("FAIL") for line in report(Run.parse("onnxruntime", STDOUT, STDERR, 0), ()))
