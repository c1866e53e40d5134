"""`pypi:<wheel file name>` in a recipe (toolkit/sources/pypi.py): the wheel comes from the index pip is configured
with, in hash-checking mode, into the download cache under its own name; a wrong pin or a name that is no wheel's
is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.recipe.pinned import url_problem
from toolkit.sources.cache import Cache
from toolkit.sources.download import fetch
from toolkit.util.errors import ToolkitError

# The smallest pinned win_amd64 wheel the project uses anyway (the Windows smoke's WebGPU EP).
WHEEL = "pypi:onnxruntime_ep_webgpu-0.4.0-py3-none-win_amd64.whl"
SHA256 = "7db646669d1a2390551da675115ea125e68cb3d4d2c3a2d6e463372bf8d6ea87"


@pytest.mark.network
def test_a_pinned_wheel_comes_from_pips_index_into_the_cache(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    got = fetch(WHEEL, SHA256, cache)
    assert got == cache.download_path(SHA256, WHEEL)
    assert got.name == "onnxruntime_ep_webgpu-0.4.0-py3-none-win_amd64.whl"
    assert fetch(WHEEL, SHA256, cache) == got  # a cache hit: pip is not asked again
    with pytest.raises(ToolkitError) as raised:
        fetch(WHEEL, "0" * 64, Cache(tmp_path / "other"))
    assert "pip download onnxruntime_ep_webgpu-0.4.0-py3-none-win_amd64.whl failed" in raised.value.message
    with pytest.raises(ToolkitError) as offline:
        fetch(WHEEL, "1" * 64, Cache(tmp_path / "offline"), offline=True)
    assert offline.value.message.startswith("offline: pypi:onnxruntime_ep_webgpu-0.4.0-py3-none-win_amd64.whl")


def test_a_recipe_names_a_wheel_by_its_file_name() -> None:
    assert url_problem(WHEEL) is None
    bad = "pypi:onnxruntime==1.27.0"
    example = "'pypi:pkg-1.0-py3-none-any.whl'"
    assert url_problem(bad) == f"expected pypi:<a wheel's file name> such as {example}, got {bad!r}"
