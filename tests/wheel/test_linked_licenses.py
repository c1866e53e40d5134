"""Licenses of other projects' code inside a wheel's own libraries (toolkit/wheel/licenses.py: linked_notices): a
fetched dependency's license files from the top of its tree, and, for a static archive of the build machine, the
text its Debian package ships, found from what the linker itself recorded (toolkit/cmake/link_inputs.py, real
ninja and GNU ld). What has no license is refused, naming the recipe entry or the archive."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from toolkit.cmake.link_inputs import archives_linked
from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import FetchContentDep
from toolkit.util.errors import ToolkitError
from toolkit.wheel.licenses import LicenseSource, all_of, with_carried_licenses
from toolkit.wheel.linked_licenses import linked_notices

PROJECT = Path(__file__).resolve().parents[2]
ARCHIVE = PinnedArchive(url="https://example.org/dep.tar.gz", sha256="0" * 64)


def dep(name: str, **fields) -> FetchContentDep:
    return FetchContentDep(name=name, archive=ARCHIVE, **fields)


def tree(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    top = tmp_path / "deps" / name
    for relative, text in files.items():
        (top / relative).parent.mkdir(parents=True, exist_ok=True)
        (top / relative).write_text(text)
    return top


def test_a_dependencys_top_license_files_go_under_linked_and_its_license_joins_the_expression(tmp_path):
    fmt = tree(tmp_path, "fmt", {"LICENSE": "fmt's MIT text\n", "src/format.cc": "code\n"})
    # json keeps texts for its tooling in LICENSES/ (GPL-3.0 among them): only its top files are its license.
    json_tree = tree(tmp_path, "json", {"LICENSE.MIT": "json's MIT text\n", "LICENSES/GPL-3.0-only.txt": "GPL\n"})
    dml = tree(tmp_path, "directml", {"DirectML.dll": "MZ"})
    notices = linked_notices([(dep("fmt", license="MIT"), fmt), (dep("json", license="MIT"), json_tree),
                              (dep("zlib", license="Zlib"), tree(tmp_path, "zlib", {"LICENSE": "zlib\n"})),
                              (dep("directml", in_wheel=False), dml)], {})
    assert notices.files == {"linked/fmt/LICENSE": b"fmt's MIT text\n", "linked/json/LICENSE.MIT": b"json's MIT text\n",
                             "linked/zlib/LICENSE": b"zlib\n"}
    assert notices.expressions == ("MIT", "Zlib")
    assert with_carried_licenses("MIT", [], notices.expressions) == "MIT AND Zlib"


@pytest.mark.parametrize("parts, joined", [
    (["(MIT AND Zlib AND (Apache-2.0 WITH LLVM-exception AND MIT))", "Zlib", "BSD-3-Clause OR GPL-2.0-only"],
     "MIT AND Zlib AND Apache-2.0 WITH LLVM-exception AND (BSD-3-Clause OR GPL-2.0-only)"),
    (["(MIT OR Apache-2.0) AND X", "X"], "(MIT OR Apache-2.0) AND X"),
    (["(A OR B) OR C", "D"], "((A OR B) OR C) AND D"),
    (["MIT OR Apache-2.0"], "MIT OR Apache-2.0"),
])
def test_the_wheels_expression_names_each_term_once_without_changing_its_meaning(parts, joined):
    assert all_of(parts) == joined


def test_a_dependency_without_a_license_is_refused_naming_its_recipe_entry(tmp_path):
    fmt = tree(tmp_path, "fmt", {"LICENSE": "MIT\n"})
    with pytest.raises(ToolkitError) as err:
        linked_notices([(dep("fmt"), fmt)], {})
    assert err.value.message == ("[[fetchcontent]] fmt: no `license`, but its code is in the wheel's libraries, so the "
                              "wheel must carry its license")
    assert "add its SPDX license to the recipe's [[fetchcontent]] fmt" in err.value.hint
    assert "`in_wheel = false`" in err.value.hint


def test_a_dependency_without_license_files_needs_them_named_and_never_outside_its_tree(tmp_path):
    mp11 = tree(tmp_path, "boost", {"README.md": "Distributed under the Boost Software License\n"})
    with pytest.raises(ToolkitError, match=r"\[\[fetchcontent\]\] boost has no LICENSE, COPYING or NOTICE file at "
                                           r"its top") as err:
        linked_notices([(dep("boost", license="BSL-1.0"), mp11)], {})
    assert "license_files" in err.value.hint
    notices = linked_notices([(dep("boost", license="BSL-1.0", license_files=("README.md",)), mp11)], {})
    assert notices.files == {"linked/boost/README.md": b"Distributed under the Boost Software License\n"}
    (tmp_path / "secret").write_text("not the dependency's\n")
    (mp11 / "COPYING").symlink_to(tmp_path / "secret")
    with pytest.raises(ToolkitError, match="license_files 'COPYING' is no file inside"):
        linked_notices([(dep("boost", license="BSL-1.0", license_files=("COPYING",)), mp11)], {})


def test_the_shipped_recipes_name_the_license_of_every_dependency_their_wheels_carry():
    for recipe in sorted((PROJECT / "recipes").glob("*.toml")):
        for entry in tomllib.loads(recipe.read_text()).get("fetchcontent", []):
            assert entry.get("license") or entry.get("in_wheel") is False, f"{recipe.name}: {entry['name']}"


def system(tmp_path: Path) -> tuple[LicenseSource, Path]:
    """A build machine's files (a Debian copyright that refers to a common license) and a table naming LLVM's
    archives, with libgcc as a runtime."""
    root = tmp_path / "root"
    doc = root / "usr/share/doc/llvm-22-dev/copyright"
    doc.parent.mkdir(parents=True)
    doc.write_text("License: APACHE-2-LLVM-EXCEPTIONS\n see /usr/share/common-licenses/Apache-2.0\n")
    (root / "usr/share/common-licenses").mkdir(parents=True)
    (root / "usr/share/common-licenses/Apache-2.0").write_text("Apache License 2.0\n")
    table = tmp_path / "licenses.json"
    table.write_text(json.dumps({"bundled": [], "runtime": [{"archives": ["libgcc.a"], "why": "runtime exception"}],
                                 "linked": [{"archives": ["libLLVM*.a"], "name": "LLVM",
                                             "license": "Apache-2.0 WITH LLVM-exception",
                                             "source": "https://github.com/llvm/llvm-project",
                                             "texts": ["usr/share/doc/llvm-*-dev/copyright"],
                                             "common_licenses": ["Apache-2.0"]}]}))
    return LicenseSource(table=table, root=root), root


def test_a_static_archive_of_the_machine_brings_its_packages_texts_and_a_notice(tmp_path):
    source, _ = system(tmp_path)
    archives = {"libhipgpu.so": ("/usr/lib/llvm-22/lib/libLLVMCore.a", "/usr/lib/gcc/x86_64-linux-gnu/16/libgcc.a"),
                "libhip-compiler.so": ("/usr/lib/llvm-22/lib/libLLVMSupport.a",), "libother.so": None}
    notices = linked_notices([], archives, source)
    assert sorted(notices.files) == ["linked/LLVM/Apache-2.0", "linked/LLVM/NOTICE", "linked/LLVM/copyright"]
    assert notices.files["linked/LLVM/Apache-2.0"] == b"Apache License 2.0\n"
    notice = notices.files["linked/LLVM/NOTICE"].decode()
    assert notice.startswith("LLVM is linked statically into libhip-compiler.so, libhipgpu.so: 2 archive(s) of the "
                             "build machine, libLLVMCore.a, libLLVMSupport.a.\n"), notice
    assert "License: Apache-2.0 WITH LLVM-exception; its text: Apache-2.0, copyright beside this file." in notice
    assert notices.expressions == ("Apache-2.0 WITH LLVM-exception",)


def test_an_archive_no_entry_names_is_refused_naming_it_and_the_library(tmp_path):
    source, _ = system(tmp_path)
    with pytest.raises(ToolkitError) as err:
        linked_notices([], {"libhipgpu.so": ("/usr/lib/x86_64-linux-gnu/libxml2.a",)}, source)
    assert err.value.message == (f"/usr/lib/x86_64-linux-gnu/libxml2.a: the linker put it into libhipgpu.so, but "
                              f"{tmp_path / 'licenses.json'} names no license for it")
    assert "`linked` entry" in err.value.hint


@pytest.mark.skipif(shutil.which("ninja") is None or shutil.which("gcc") is None, reason="needs ninja and gcc")
def test_the_linkers_own_record_names_the_archives_from_outside_the_work_tree(tmp_path):
    """CMake's link rule as it writes it for GNU ld (a dependency file, `deps = gcc`), run by ninja for real."""
    system_lib = tmp_path / "usr/lib"
    work = tmp_path / "work"
    build = work / "cmake"
    for folder, name in ((system_lib, "outside"), (build, "inside")):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.c").write_text(f"int {name}(void) {{ return 1; }}\n")
        subprocess.run(["gcc", "-fPIC", "-c", folder / f"{name}.c", "-o", folder / f"{name}.o"], check=True)
        subprocess.run(["ar", "rcs", folder / f"lib{name}.a", folder / f"{name}.o"], check=True)
    (build / "probe.c").write_text("int outside(void); int inside(void); int probe(void) { return outside() + "
                                   "inside(); }\n")
    (build / "build.ninja").write_text(
        "rule C_COMPILER__probe_Release\n  command = gcc -fPIC -c $in -o $out\n"
        "rule C_SHARED_LIBRARY_LINKER__probe_Release\n  depfile = $out.d\n  deps = gcc\n"
        "  command = gcc -shared -o $out $in -Wl,--dependency-file=$out.d\n"
        "rule C_SHARED_LIBRARY_LINKER__bare_Release\n  command = gcc -shared -o $out $in\n"
        "build probe.o: C_COMPILER__probe_Release probe.c\n"
        f"build out/libprobe.so: C_SHARED_LIBRARY_LINKER__probe_Release probe.o libinside.a {system_lib}/liboutside.a\n"
        "build libbare.so: C_SHARED_LIBRARY_LINKER__bare_Release probe.o libinside.a "
        f"{system_lib}/liboutside.a\n")
    subprocess.run(["ninja", "-C", build], check=True, capture_output=True)
    found = archives_linked(build, ["libprobe.so", "libbare.so", "libmissing.so"], work)
    assert found["libbare.so"] is None and found["libmissing.so"] is None  # no record; no such library
    probe = found["libprobe.so"]
    assert probe is not None and f"{system_lib}/liboutside.a" in probe, probe
    assert not any("libinside" in p for p in probe), probe
    # The rest is the compiler's and the C library's runtime (libgcc.a, libc_nonshared.a), which the shipped table
    # lets through without a notice.
    rest = tuple(p for p in probe if not p.endswith("liboutside.a"))
    assert rest and linked_notices([], {"libprobe.so": rest}).files == {}, rest
