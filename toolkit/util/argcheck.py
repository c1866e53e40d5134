"""Checks for values that end up on a tool's command line: git URLs, commits and refs, CMake defines,
container image names and environment assignments.

Each check runs where the value is read (a recipe key, a lock or series file, a command-line option, an
environment variable) and raises a ToolkitError whose one line names that place (`where`) and says what is
allowed. The runners check again where the value is used (toolkit.util.process.run_git, the CMake and container
command builders) and put it where the tool cannot read it as an option (after `--end-of-options` or `--`,
or glued to its option: `-DNAME=VALUE`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from toolkit.util.errors import ToolkitError
from toolkit.util.redact import redact_text

# The schemes a git URL may use, and so the only protocols git is allowed to run (submodules included).
GIT_SCHEMES = ("https", "ssh", "git", "file")
GIT_URL_FORMS = "https://, ssh://, git://, file://, user@host:path or a local path"

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHORT_COMMIT = re.compile(r"^[0-9a-f]{4,40}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TRANSPORT = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)")
_SCP = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^@/:\[\]]+):(?P<path>.*)$")
_REF_BAD = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
_REV_SUFFIX = re.compile(r"(?:[~^][0-9]*)+$")
# A C identifier: environment variable names, CMake define names, Python import packages alike.
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# OCI image references: [host[:port]/]path[:tag][@algorithm:digest], every part starting with a letter or digit.
_IMAGE = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]+)?/)?[a-z0-9][a-z0-9._/-]*"
                    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[a-z0-9]+:[0-9a-fA-F]{32,})?$")



def is_sha256(value: str) -> bool:
    """A sha256 as every pin spells it: 64 lowercase hex digits."""
    return _SHA256.fullmatch(value) is not None

def refuse(where: str, value: str, problem: str, allowed: str) -> ToolkitError:
    """The one-line error: `where: 'value' problem; allowed: ...` (a long value shortened: it is echoed)."""
    shown = repr(value) if len(value) <= 120 else f"{value[:120]!r}... ({len(value)} characters)"
    return ToolkitError(f"{where}: {redact_text(shown)} {problem}; expected {allowed}")


def plain(value: str, where: str, allowed: str) -> str:
    """A value that is neither empty, nor option-looking (a leading '-'), nor holds a control character."""
    if not value:
        raise refuse(where, value, "is empty", allowed)
    if value.startswith("-"):
        raise refuse(where, value, "starts with '-' (a tool would read it as an option)", allowed)
    if _CONTROL.search(value):
        raise refuse(where, value, "holds a control character (a newline, a tab, NUL, ...)", allowed)
    return value


# -- git -----------------------------------------------------------------------------------------------

def git_url_problem(url: str) -> str | None:
    """Why `url` is not an accepted git URL, or None."""
    if not url:
        return "is empty"
    if url.startswith("-"):
        return "starts with '-' (git would read it as an option)"
    if _CONTROL.search(url):
        return "holds a control character"
    if _TRANSPORT.match(url):
        return f"uses the remote-helper transport {url.split('::', 1)[0]}:: (ext::, fd::, ... run commands)"
    scheme = _SCHEME.match(url)
    if scheme:
        if scheme.group(1).lower() not in GIT_SCHEMES:
            return f"uses the scheme {scheme.group(1)}://"
        host = scheme.group(2).rpartition("@")[2]
        if host.startswith("-") or scheme.group(2).startswith("-"):
            return "names a host starting with '-'"
        return None
    head = url.split("/", 1)[0]
    if ":" not in head:
        return None  # a local path
    scp = _SCP.match(url)
    if scp is None:
        return "is neither a URL, nor user@host:path, nor a local path"
    if any(part and part.startswith("-") for part in (scp.group("user"), scp.group("host"), scp.group("path"))):
        return "has a part starting with '-'"
    return None


def git_url(url: str, where: str) -> str:
    problem = git_url_problem(url)
    if problem is not None:
        raise refuse(where, url, problem, f"a git URL ({GIT_URL_FORMS})")
    return url


def git_commit(commit: str, where: str) -> str:
    if not _COMMIT.match(commit):
        raise refuse(where, commit, "is not a commit id", "a full 40-hex commit id (a branch or tag can move)")
    return commit


def ref_problem(name: str) -> str | None:
    """Why `name` is not a valid ref name by `git check-ref-format --allow-onelevel`'s rules (and not
    option-looking), or None."""
    if not name:
        return "is empty"
    if name.startswith("-"):
        return "starts with '-' (git would read it as an option)"
    if name == "@":
        return "is '@'"
    if _REF_BAD.search(name):
        return "holds a space, a control character or one of ~ ^ : ? * [ \\"
    if ".." in name or "@{" in name:
        return "holds '..' or '@{'"
    if name.startswith("/") or name.endswith(("/", ".")) or "//" in name:
        return "starts or ends with '/', ends with '.', or holds '//'"
    if any(part.startswith(".") or part.endswith(".lock") for part in name.split("/")):
        return "has a component starting with '.' or ending with '.lock'"
    return None


def git_revision(rev: str, where: str) -> str:
    """A revision a person names: a (short) commit id, or a ref name, either followed by ~N / ^N steps."""
    base = _REV_SUFFIX.sub("", rev) if not rev.startswith("-") else rev
    if _SHORT_COMMIT.match(base):
        return rev
    problem = ref_problem(base)
    if problem is not None:
        raise refuse(where, rev, problem, "a commit id, a branch or a tag (git check-ref-format rules), "
                                          "optionally followed by ~N or ^N")
    return rev


def git_protocol_config(file_allowed: bool) -> list[str]:
    """`git -c` options that let git run only the accepted schemes' protocols, in submodules too
    (git hands -c settings down to the git commands it starts). file:// only when `file_allowed`
    (CVE-2022-39253: a remote superproject must not make git read local repositories)."""
    config = ["-c", "protocol.allow=never"]
    for scheme in GIT_SCHEMES:
        allowed = "always" if scheme != "file" or file_allowed else "never"
        config += ["-c", f"protocol.{scheme}.allow={allowed}"]
    return config


# -- CMake ---------------------------------------------------------------------------------------------

def cmake_define(name: str, value: str, where: str, is_list: bool = False) -> str:
    """A -D value: never a newline (CMake's cache is line based), a ';' only where a list was asked for."""
    if not IDENTIFIER.match(name):
        raise refuse(where, name, "is not a CMake variable name", "letters, digits and '_', not starting with a digit")
    if "\n" in value or "\r" in value or "\x00" in value:
        raise refuse(where, value, "holds a newline or NUL", "a one-line value")
    if ";" in value and not is_list:
        raise refuse(where, value, "holds ';', which CMake reads as a list separator",
                     "a value without ';' (a recipe writes a list as an array of strings)")
    return value


def cmake_defines(defines: dict[str, str], lists: Collection[str] = ()) -> None:
    """Every -D of one CMake command line; `lists`: the names whose value is a list."""
    for name, value in defines.items():
        cmake_define(name, value, f"CMake define -D{name}", name in lists)


# -- containers ----------------------------------------------------------------------------------------

IMAGE_FORMS = "[registry[:port]/]name[:tag][@sha256:digest], e.g. localhost/build:1"


def image_problem(image: str) -> str | None:
    if _IMAGE.match(image):
        return None
    if image.startswith("-"):
        return "starts with '-' (the engine would read it as an option)"
    return "is not an image reference"


def image_name(image: str, where: str) -> str:
    problem = image_problem(image)
    if problem is not None:
        raise refuse(where, image, problem, IMAGE_FORMS)
    return image


def env_assignment(name: str, value: str, where: str) -> str:
    """NAME=VALUE for an engine's --env / --build-arg: a plain variable name, a value without newlines."""
    if not IDENTIFIER.match(name):
        raise refuse(where, f"{name}={value}", "does not start with a variable name",
                     "NAME=VALUE with NAME of letters, digits and '_', not starting with a digit")
    if "\n" in value or "\x00" in value:
        raise refuse(where, f"{name}={value}", "holds a newline or NUL", "a one-line value")
    return f"{name}={value}"


def name_value_pairs(items: list[str], option: str) -> dict[str, str]:
    """Repeated `--env NAME=VALUE`-style options as a dict; a malformed one names the option."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ToolkitError(f"{option} {item!r}: expected NAME=VALUE")
        env_assignment(name, value, option)
        out[name] = value
    return out


def expand_feature_flags(argv: list[str]) -> list[str]:
    """`--with-hipdnn` reads better on a command line; argparse wants `--with hipdnn`."""
    out = []
    for arg in argv:
        for flag in ("--with-", "--without-"):
            if arg.startswith(flag) and len(arg) > len(flag):
                out += [flag[:-1], arg[len(flag):]]
                break
        else:
            out.append(arg)
    return out
