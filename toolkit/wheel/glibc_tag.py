"""The manylinux tag of a wheel newer than every policy auditwheel has (PEP 600's `manylinux_X_Y_<arch>`).

PEP 600 defines a tag for every glibc: `manylinux_X_Y` is a wheel that runs on any distribution with glibc X.Y or newer
whose libraries it uses from the system are the ones such distributions all have. auditwheel computes that tag from
its policies, and has none beyond its newest (hip-ep built in Debian sid needs GLIBC_2.43; auditwheel 6.8 stops at
2.41): it refuses such a wheel. Here the tag is computed the same way, where auditwheel has no policy: X.Y is the
highest GLIBC_ symbol version the wheel's ELF files need (its own libraries and the copies it bundles), and every
library it leaves to the system must be on the library list of auditwheel's newest policy, read from the policy
file of the auditwheel installed (never a copy of it). ROCm and the recipe's excludes stay external as auditwheel's
--exclude leaves them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.wheel.rocm import Need

_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)$")


@dataclass(frozen=True)
class Policy:
    name: str  # manylinux_2_41
    glibc: tuple[int, int]
    libraries: frozenset[str]  # its lib_whitelist: what a wheel of it may leave to the system


@cache
def newest_policy() -> Policy:
    """auditwheel's manylinux policy of the highest glibc, from the policy file of the auditwheel installed."""
    text = resources.files("auditwheel.policy").joinpath("manylinux-policy.json").read_text(encoding="utf-8")
    policies = []
    for policy in json.loads(text):
        match = _MANYLINUX.match(policy["name"])
        if match:
            glibc = (int(match.group(1)), int(match.group(2)))
            policies.append(Policy(policy["name"], glibc, frozenset(policy["lib_whitelist"])))
    if not policies:
        raise ToolkitError("auditwheel's manylinux-policy.json names no manylinux_X_Y policy",
                           "reinstall auditwheel: pip install --force-reinstall auditwheel")
    return max(policies, key=lambda p: p.glibc)


def glibc_numbers(version: str | None) -> tuple[int, ...]:
    """'2.43' -> (2, 43); None (no GLIBC_ need) -> ()."""
    return tuple(int(part) for part in version.split(".")) if version else ()


def beyond_policies(highest: dict[str, str]) -> bool:
    """Whether the highest GLIBC_ version needed (highest_versions' "GLIBC") is newer than auditwheel's newest
    policy."""
    return glibc_numbers(highest.get("GLIBC")) > newest_policy().glibc


def computed_tag(highest: dict[str, str], needs: list[Need], arch: str) -> str:
    """`manylinux_X_Y_<arch>` for a wheel whose libraries need GLIBC_X.Y at most (beyond auditwheel's newest policy)
    and leave to the system (`needs` of kind "system") only libraries on that policy's list; anything else is an
    error naming the library and what needs it."""
    policy = newest_policy()
    glibc = glibc_numbers(highest.get("GLIBC"))
    if glibc <= policy.glibc:
        raise ToolkitError(f"GLIBC_{highest.get('GLIBC')} is within auditwheel's {policy.name}: auditwheel computes "
                           "this wheel's tag")
    outside = [n for n in needs if n.kind == "system" and n.soname not in policy.libraries
               and not n.reason.startswith("the dynamic loader")]
    if outside:
        listed = "; ".join(f"{n.soname} (needed by {', '.join(n.needed_by)})" for n in outside)
        raise ToolkitError(f"no manylinux tag: the wheel needs GLIBC_{highest['GLIBC']}, newer than auditwheel's "
                           f"newest policy {policy.name}, and leaves to the system libraries that policy does not "
                           f"list: {listed}",
                           "bundle them (take them out of the system list), or give the recipe [wheel] platform = "
                           "\"linux\" for an index of your own")
    return f"manylinux_{glibc[0]}_{glibc[1]}_{arch}"


def retag_wheel_file(source: Path, dist_info: str, tag: str) -> str:
    """Write `tag` as the platform of every Tag line of source/<dist_info>/WHEEL; returns that member's path."""
    member = f"{dist_info}/WHEEL"
    path = source / member
    lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("Tag: "):
            python, abi, _ = line[len("Tag: "):].split("-", 2)
            line = f"Tag: {python}-{abi}-{tag}"
            if line in lines:  # linux_x86_64 and another platform of the same python and abi: one line now
                continue
        lines.append(line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return member
