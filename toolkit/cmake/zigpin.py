"""toolchains.toml's [zig]: the ziglang wheel pinned per machine, read by its dataclass's fields
(toolkit/util/tomlclass.py); the file's comments say why each key is so."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.recipe.core import floor_problem
from toolkit.util.argcheck import is_sha256
from toolkit.util.tomlclass import read
from toolkit.util.tomlfields import doc, problem
from toolkit.util.tomlread import Site, load_toml

TOOLCHAINS_FILE = Path(__file__).resolve().with_name("toolchains.toml")


def _sha256(value: str, site: Site) -> None:
    if not is_sha256(value):
        raise site.error("expected 64 lowercase hex digits")


@dataclass(frozen=True)
class ZigMachine:
    """[zig.machines.MACHINE]: the wheel for one machine (Python's platform.machine())."""

    wheel: str = field(metadata=doc("The PyPI wheel pip installs."))
    wheel_sha256: str = field(metadata=doc("Its sha256 (pip's hash-checking mode).", check=_sha256))
    zig_sha256: str = field(metadata=doc("The sha256 of the wheel's `ziglang/zig`, checked before every configure.",
                                         check=_sha256))
    multiarch: str = field(metadata=doc("The target's Debian multiarch tuple."))


@dataclass(frozen=True)
class ZigTable:
    version: str = field(metadata=doc("The ziglang version."))
    default_glibc_floor: str = field(metadata=doc("The floor when neither the recipe nor the command line names one.",
                                                  check=problem(floor_problem)))
    system_include: str = field(metadata=doc("The system's headers folder."))
    machines: dict[str, ZigMachine] = field(metadata=doc("The wheel per machine."))
    distribution: str = field(default="ziglang", metadata=doc("The PyPI distribution."))


@dataclass(frozen=True)
class ZigPin:
    """toolchains.toml's [zig] for this machine."""

    version: str
    wheel: str
    wheel_sha256: str
    zig_sha256: str
    multiarch: str
    system_include: str
    distribution: str = "ziglang"

    def requirement(self) -> str:
        """A pip requirement line that installs exactly the pinned wheel (pip's hash-checking mode)."""
        return f"{self.distribution}=={self.version} --hash=sha256:{self.wheel_sha256}"


def zig_settings(machine: str, file: Path = TOOLCHAINS_FILE) -> tuple[ZigPin, str]:
    """(the pin for `machine`, the default glibc floor) from the file's [zig]."""
    table = load_toml(file).table("zig")
    zig = read(ZigTable, table)
    wheel = zig.machines.get(machine)
    if wheel is None:
        raise table.error(f"machines.{machine}", f"no ziglang wheel pinned for this machine ({machine}); pinned: "
                          f"{', '.join(zig.machines)}. Add its wheel's name and sha256 and its zig's sha256")
    pin = ZigPin(zig.version, wheel.wheel, wheel.wheel_sha256, wheel.zig_sha256, wheel.multiarch, zig.system_include,
                 zig.distribution)
    return pin, zig.default_glibc_floor
