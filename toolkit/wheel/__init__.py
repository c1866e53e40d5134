"""Wheels: package the built EP libraries, repair them (auditwheel for manylinux, delvewheel for Windows), inspect
them, and the code that ships inside them (templates/).

Entry points the pipeline's adapters call:
    build_wheel(settings, lib_dir, build_info, out_dir) -> Path
    repair_wheel(wheel, out_dir, excludes, components, rocm_paths) -> RepairResult
    repair_windows_wheel(wheel, out_dir) -> RepairResult
    inspect_wheel(path) -> WheelReport
Smoke-testing a wheel is toolkit/smoke/'s.
"""
