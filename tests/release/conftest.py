"""The release tests' session fixtures: the build root's image, made once per test session."""

from __future__ import annotations

import pytest

from tests.support.release_image import make_image


@pytest.fixture(scope="session")
def root_image(sid_root) -> str:
    """The tag of the sid root's image (`python -m toolkit root image`), made once; marked `buildroot`."""
    tag, seconds = make_image()
    print(f"root image {tag}: {seconds:.0f} s")
    return tag
