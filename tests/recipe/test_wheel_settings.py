"""[wheel] and [smoke] recipe sections: what they accept and how they name a mistake."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolkit.recipe.smoke import SmokeSettings
from toolkit.recipe.wheel import Author, Component, WheelSettings
from toolkit.util import tomlclass
from toolkit.util.errors import RecipeError
from toolkit.util.tomlread import load_toml

GOOD = '''
[wheel]
version = "0.2.0"
onnxruntime = "~=1.24.0"
excludes = ["libhsakmt.so.*"]
license = "mit OR apache-2.0"
authors = [{ name = "AMD", email = "ep@example.org" }, { name = "someone else" }]
classifiers = ["Programming Language :: Python :: 3"]
urls = { Source = "https://example.org/ep" }
[[wheel.components]]
library = "amdgpu-ep"
ep_name = "AMDGPUExecutionProvider"
[[wheel.components]]
library = "migraphx-backend"
[[wheel.components]]
library = "hipdnn-backend"
feature = "hipdnn"

[smoke]
packages = ["onnxruntime-ep-webgpu"]
env = { AMDGPU_MIGRAPHX_EP_LIBRARY = "{library:onnxruntime_ep_webgpu}" }
expect_log = ['^\\[amdgpu-ep\\] forwarded [1-9]']
atol = 1e-3
'''


def read(tmp_path: Path, text: str):
    path = tmp_path / "recipe.toml"
    path.write_text(text)
    return load_toml(path), path


def test_reads_a_full_recipe(tmp_path):
    table, _ = read(tmp_path, GOOD)
    wheel = tomlclass.read(WheelSettings, table.table("wheel"))
    assert wheel.distribution == "onnxruntime-ep-amdgpu"
    assert wheel.import_package == "onnxruntime_ep_amdgpu"
    assert wheel.onnxruntime == "~=1.24.0" and wheel.trace_env is None
    assert wheel.excludes == ("libhsakmt.so.*",)
    assert [c.filename for c in wheel.components_for(frozenset())] == ["libamdgpu-ep.so", "libmigraphx-backend.so"]
    assert wheel.components_for(frozenset({"hipdnn"}))[-1] == Component("hipdnn-backend", None, "hipdnn")
    assert wheel.license == "MIT OR Apache-2.0"  # canonical SPDX spelling
    assert wheel.authors == (Author("AMD", "ep@example.org"), Author("someone else"))
    assert wheel.urls == (("Source", "https://example.org/ep"),)
    assert wheel.classifiers == ("Programming Language :: Python :: 3",)
    smoke = tomlclass.read(SmokeSettings, table.table("smoke"))
    assert smoke.packages == ("onnxruntime-ep-webgpu",)
    assert smoke.env == {"AMDGPU_MIGRAPHX_EP_LIBRARY": "{library:onnxruntime_ep_webgpu}"}
    assert smoke.atol == 1e-3 and smoke.rtol == 1e-4


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('version = "0.2.0"', 'version = "zero"', "key 'wheel.version': 'zero' is not a PEP 440 version"),
        ('onnxruntime = "~=1.24.0"', 'onnxruntime = "1.24"', "key 'wheel.onnxruntime': '1.24' is not a version range"),
        ('library = "migraphx-backend"', 'library = "amdgpu-ep"',
         "key 'wheel.components[1].library': library 'amdgpu-ep' is listed twice"),
        ('library = "migraphx-backend"', 'library = "libmigraphx-backend.so"',
         "key 'wheel.components[1].library': expected a library name"),
        ('feature = "hipdnn"', 'feture = "hipdnn"', "key 'wheel.components[2].feture': unknown key"),
        ('ep_name = "AMDGPUExecutionProvider"', '', "key 'wheel.components': no component has an ep_name"),
        ('license = "mit OR apache-2.0"', 'license = "MIT License"',
         "key 'wheel.license': 'MIT License' is not an SPDX license expression"),
        ('classifiers = ["Programming Language :: Python :: 3"]', 'classifiers = ["License :: OSI Approved"]',
         "key 'wheel.classifiers[0]': no 'License ::' classifier: the [wheel] license key says it"),
        ('classifiers = ["Programming Language :: Python :: 3"]', 'classifiers = ["Operating System :: Any"]',
         "key 'wheel.classifiers[0]': no 'Operating System ::' classifier: the toolkit gives each wheel its "
         "platform's"),
        ('classifiers = ["Programming Language :: Python :: 3"]', 'classifiers = ["Python 3"]',
         "key 'wheel.classifiers[0]': 'Python 3' is not a classifier"),
        ('{ name = "someone else" }', '{ nam = "someone else" }', "key 'wheel.authors[1].nam': unknown key"),
        ('Source = "https://example.org/ep"', 'Source = "example.org"',
         "key 'wheel.urls.Source': expected an https:// URL"),
        ('feature = "hipdnn"', 'feature = "hipdnn"\nlicense = "LicenseRef-X"',
         "key 'wheel.components[2].license_files': a library the wheel carries but the tree did not write needs both"),
        ('feature = "hipdnn"', 'feature = "hipdnn"\nlicense = "LicenseRef-X"\nlicense_files = ["dep/../x.txt"]',
         "key 'wheel.components[2].license_files[0]': expected '<fetchcontent name>/<path inside it>' without '..'"),
        ('feature = "hipdnn"', 'feature = "hipdnn"\nlicense = "Microsoft terms"\nlicense_files = ["dep/x.txt"]',
         "key 'wheel.components[2].license': 'Microsoft terms' is not an SPDX license expression"),
        ('library = "migraphx-backend"', 'library = "migraphx-backend"\nep_name = "AMDGPUExecutionProvider"',
         "key 'wheel.components[1].ep_name': EP name 'AMDGPUExecutionProvider' is listed twice"),
        ("atol = 1e-3", 'atol = "small"', "key 'smoke.atol': expected a number, got string 'small'"),
        ("expect_log = ['^", "expect_log = ['(^", "key 'smoke.expect_log[0]': not a valid regular expression"),
        ('packages = ["onnxruntime-ep-webgpu"]', 'packages = ["not a requirement!"]', "key 'smoke.packages[0]'"),
    ],
)
def test_errors_name_file_and_key(tmp_path, old, new, message):
    assert old in GOOD
    table, path = read(tmp_path, GOOD.replace(old, new))
    with pytest.raises(RecipeError) as err:
        tomlclass.read(WheelSettings, table.table("wheel"))
        tomlclass.read(SmokeSettings, table.table("smoke"))
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_recipe_smoke_routes_by_profile_and_runs_genai(tmp_path):
    from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe

    smoke = load_recipe(find_recipe("amdgpu-ep", PROJECT_ROOT)).smoke
    assert smoke.provider_options == {"profile": "migraphx"}
    assert smoke.session_config == {"ep.migraphx.max_dynamic_batch": "4"}
    assert smoke.wrong_provider_options == {"profile": "no-such-backend"}
    assert re.search(smoke.wrong_error, "AMDGPUExecutionProvider: unknown profile 'no-such-backend' (from session "
                                        "option ep.amdgpuexecutionprovider.profile); accepted: auto, migraphx, hipdnn")
    assert smoke.genai and "onnxruntime-genai>=0.16" in smoke.packages
    table, path = read(tmp_path, GOOD.replace("atol = 1e-3", "atol = 1e-3\nwrong_error = 'x'"))
    with pytest.raises(RecipeError,
                       match="key 'smoke.wrong_error': wrong_provider_options and wrong_error go together"):
        tomlclass.read(SmokeSettings, table.table("smoke"))
