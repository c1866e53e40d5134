"""The license of a library a wheel carries but its tree did not write (toolkit/wheel/licenses.py): its texts come
from the build's fetched dependencies into .dist-info/licenses/bundled/<its file>/, its expression joins the
wheel's, and a text outside its dependency, or a dependency the build did not fetch, is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.recipe.wheel import Component
from toolkit.util.errors import ToolkitError
from toolkit.wheel.licenses import copy_carried_licenses, with_carried_licenses

DIRECTML = Component("DirectML", feature="dml", plugin=False, license="LicenseRef-Microsoft-DirectML",
                     license_files=("directml_license/plugins/DirectML_LICENSE.txt",
                                    "directml_license/plugins/DirectML_ThirdPartyNotices.txt"))


def fetched(tmp_path: Path) -> Path:
    dep = tmp_path / "deps" / "directml_license" / "src"
    (dep / "plugins").mkdir(parents=True)
    (dep / "plugins" / "DirectML_LICENSE.txt").write_text("MICROSOFT SOFTWARE LICENSE TERMS\n")
    (dep / "plugins" / "DirectML_ThirdPartyNotices.txt").write_text("third-party notices\n")
    return dep


def test_the_texts_go_under_the_carried_files_name_and_the_expression_joins(tmp_path: Path) -> None:
    dep = fetched(tmp_path)
    project = tmp_path / "project"
    copied = copy_carried_licenses([Component("directx-ep"), DIRECTML], "windows", {"directml_license": dep}, project)
    assert copied == ("bundled/DirectML.dll/DirectML_LICENSE.txt",
                      "bundled/DirectML.dll/DirectML_ThirdPartyNotices.txt")
    assert (project / copied[0]).read_text() == "MICROSOFT SOFTWARE LICENSE TERMS\n"
    assert with_carried_licenses("MIT", [Component("directx-ep"), DIRECTML]) == "MIT AND LicenseRef-Microsoft-DirectML"
    assert (with_carried_licenses("MIT OR Apache-2.0", [DIRECTML])
            == "(MIT OR Apache-2.0) AND LicenseRef-Microsoft-DirectML")
    assert with_carried_licenses("MIT", [Component("directx-ep")]) == "MIT"


def test_a_dependency_the_build_did_not_fetch_is_named(tmp_path: Path) -> None:
    with pytest.raises(ToolkitError) as err:
        copy_carried_licenses([DIRECTML], "windows", {}, tmp_path / "project")
    assert str(err.value).startswith("[[wheel.components]] DirectML: license_files names "
                              "'directml_license/plugins/DirectML_LICENSE.txt', but this build fetched no "
                              "[[fetchcontent]] 'directml_license'")
    assert err.value.hint == "declare it in the recipe's [[fetchcontent]] with the feature's `when`"


def test_a_text_missing_or_reached_through_a_link_out_of_the_dependency_is_refused(tmp_path: Path) -> None:
    dep = fetched(tmp_path)
    (dep / "plugins" / "DirectML_ThirdPartyNotices.txt").unlink()
    outside = tmp_path / "secret.txt"
    outside.write_text("not the dependency's\n")
    with pytest.raises(ToolkitError, match="license_files 'directml_license/plugins/DirectML_ThirdPartyNotices.txt' "
                                           "is no file inside"):
        copy_carried_licenses([DIRECTML], "windows", {"directml_license": dep}, tmp_path / "project")
    (dep / "plugins" / "DirectML_ThirdPartyNotices.txt").symlink_to(outside)
    with pytest.raises(ToolkitError, match="is no file inside"):
        copy_carried_licenses([DIRECTML], "windows", {"directml_license": dep}, tmp_path / "other")
    assert not (tmp_path / "other" / "bundled" / "DirectML.dll" / "DirectML_ThirdPartyNotices.txt").exists()
