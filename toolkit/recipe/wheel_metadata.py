"""The checks of the `[wheel]` keys that describe the project on an index rather than build it: the license (an SPDX
expression, checked with packaging's parser), authors, project URLs and classifiers (toolkit/recipe/wheel.py declares
the section)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

from toolkit.util.errors import ToolkitError
from toolkit.util.tomlfields import doc
from toolkit.util.tomlread import Site

_URL_LABEL_MAX = 32
_CLASSIFIER = re.compile(r"^[A-Za-z0-9][^:]*( :: [^:]+)+$")


@dataclass(frozen=True)
class Author:
    name: str | None = field(default=None, metadata=doc("The author's (a person's or an organisation's) name."))
    email: str | None = field(default=None, metadata=doc("Their e-mail address."))

    def validated(self, site: Site) -> Self:
        if self.name is None and self.email is None:
            raise site.key("name").error("an author needs a name, an email or both")
        if self.email is not None and not re.match(r"^[^@\s<>,]+@[^@\s<>,]+$", self.email):
            raise site.key("email").error(f"{self.email!r} is not an e-mail address")
        return self


def spdx_tools() -> tuple[Callable[[str], str], type[Exception]]:
    """packaging's SPDX expression parser, which came in packaging 24.2. The dependency floor stays lower: raising
    it changes the dependency list the build roots' toolkit venvs are keyed by, and every root would make one anew."""
    try:
        from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression
    except ImportError:
        raise ToolkitError("[wheel] license needs packaging >= 24.2 (SPDX license expressions)",
                           "pip install -U 'packaging>=24.2'") from None
    return canonicalize_license_expression, InvalidLicenseExpression


def canonical_license(value: str, site: Site) -> str:
    canonicalize, invalid = spdx_tools()
    try:
        return str(canonicalize(value))
    except invalid:
        raise site.error(f"{value!r} is not an SPDX license expression such as 'MIT' or "
                         "'Apache-2.0 WITH LLVM-exception'") from None


def check_url(url: str, site: Site) -> None:
    """A project URL, `site.name` its label."""
    if len(site.name) > _URL_LABEL_MAX:
        raise site.error(f"a label has at most {_URL_LABEL_MAX} characters (core metadata's rule)")
    if not url.startswith("https://"):
        raise site.error(f"expected an https:// URL, got {url!r}")


def check_classifiers(classifiers: tuple[str, ...], site: Site) -> None:
    for i, classifier in enumerate(classifiers):
        at = site.item(i)
        if not _CLASSIFIER.match(classifier):
            raise at.error(f"{classifier!r} is not a classifier such as 'Programming Language :: Python :: 3'")
        # PEP 639: License-Expression replaces them, and scikit-build-core refuses both.
        if classifier.startswith("License ::"):
            raise at.error("no 'License ::' classifier: the [wheel] license key says it")
        if classifier.startswith("Operating System ::"):
            raise at.error("no 'Operating System ::' classifier: the toolkit gives each wheel its platform's (a Linux "
                           "or a Windows build of the same recipe)")
        if classifier in classifiers[:i]:
            raise at.error(f"{classifier!r} is listed twice")
