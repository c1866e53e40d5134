"""The wheel stage: package the built EP libraries, repair them for manylinux, inspect and smoke-test.

Entry points the pipeline calls:
    build_wheel(settings, lib_dir, build_info, out_dir) -> Path
    repair_wheel(wheel, out_dir, excludes, components, rocm_paths) -> RepairResult
    inspect_wheel(path) -> WheelReport
    run_smoke(wheel_paths, settings, ...) -> int
"""
