"""The repair line says where the manylinux tag comes from: the glibc symbol versions the wheel's libraries
need (read back from the repaired libraries here), not the glibc of the machine that repaired it."""

from __future__ import annotations

import platform
import re

from tests.support.wheel_support import SETTINGS, stand_in_lib_dir
from toolkit.wheel.build import build_wheel
from toolkit.wheel.repair import repair_wheel

INFO = {"source_revision": "0123abc", "patches": [], "features": [], "rocm_version": None, "gpu_targets": []}


def test_repair_names_the_glibc_the_libraries_need_not_the_machines(tmp_path, capfd):
    # getrandom is GLIBC_2.25: the tag must follow that, whatever glibc this machine has.
    extra = tmp_path / "random.c"
    extra.write_text("#include <sys/random.h>\nlong toolkit_random(void *b) { return getrandom(b, 4, 0); }\n")
    wheel = build_wheel(SETTINGS, stand_in_lib_dir(tmp_path / "lib", umbrella_flags=[str(extra)]), INFO,
                        tmp_path / "out")
    result = repair_wheel(wheel, tmp_path / "repaired")
    said = capfd.readouterr().err
    line = next(x for x in said.splitlines() if f"{result.wheel.name}: tag " in x)
    assert "this machine's glibc)" not in line.replace("not from this machine's glibc", "")
    needed = re.search(r"computed by auditwheel from the glibc symbol versions its libraries need, "
                       r"GLIBC_2\.(\d+) at most, not from this machine's glibc\)", line)
    assert needed, line
    # The tag follows the symbols: never newer than what they need allows (auditwheel picks the lowest policy).
    tag_minor = int(re.search(r"manylinux_2_(\d+)_", result.platform_tags[0]).group(1))
    assert int(needed.group(1)) == 25 and 25 <= tag_minor < int(platform.libc_ver()[1].split(".")[1])
