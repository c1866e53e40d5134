"""The dataclass reader (toolkit/util/tomlclass.py): a table is read into a class by its fields' types, defaults and
metadata alone, and every mistake names the file and the key, as a hand-written reader's did."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, Literal, Self

import pytest

from toolkit.util.errors import RecipeError
from toolkit.util.tomlclass import Context, read
from toolkit.util.tomlfields import doc, inline, problem
from toolkit.util.tomlread import Site, load_toml


def _not_empty(value: str, site: Site) -> None:
    if not value:
        raise site.error("must not be empty")


@dataclass(frozen=True)
class Pin:
    url: str = field(metadata=doc("Its archive.", check=problem(lambda u: None if "://" in u else "not a URL")))
    sha256: str | None = field(default=None, metadata=doc("Its digest."))
    subdir: str | None = field(default=None, metadata=doc("A folder of it."))


@dataclass(frozen=True)
class Rule:
    from_: str = field(metadata=doc("Text replaced.", key="from", check=_not_empty))
    to: str = field(metadata=doc("Replacement."))
    engine: Literal["builtin", "perl"] | None = field(default=None, metadata=doc("Only with this engine."))


@dataclass(frozen=True)
class Part:
    name: str = ""   # no key: the table's name, filled by the hook
    default: bool = field(default=False, metadata=doc("On by default."))
    platforms: tuple[Literal["linux", "windows"], ...] = field(default=("linux",), metadata=doc("Platforms."))

    def validated(self, site: Site) -> Self:
        return replace(self, name=site.name)


@dataclass(frozen=True)
class Dep:
    name: str = field(metadata=doc("Its name."))
    archive: Pin = field(metadata=inline(omit=("subdir",)))


@dataclass(frozen=True)
class Demo:
    name: str = field(metadata=doc("The name.", key="meta.name"))
    summary: str = field(default="", metadata=doc("One line.", key="meta.summary"))
    mode: Literal["fast", "slow"] = field(default="fast", metadata=doc("How."))
    jobs: int = field(default=1, metadata=doc("How many."))
    rate: float | None = field(default=None, metadata=doc("A rate."))
    tool: Path | None = field(default=None, metadata=doc("A file, relative to the file."))
    globs: tuple[str, ...] = field(default=("**",), metadata=doc("Globs.", each=problem(
        lambda g: "a glob is not absolute" if g.startswith("/") else None)))
    env: dict[str, str] = field(default_factory=dict, metadata=doc("Variables."))
    suffixes: tuple[tuple[str, str], ...] = field(default=(), metadata=doc("Suffix changes, in order."))
    sets: tuple[tuple[str, ...], ...] = field(default=((),), metadata=doc("Sets.", item="an array of names"))
    defines: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Defines: a string, or a list joined with ';'.", toml=dict[str, str | tuple[str, ...]],
        convert=lambda value, site: {k: v if isinstance(v, str) else ";".join(v) for k, v in value.items()}))
    rules: tuple[Rule, ...] = field(default=(), metadata=doc("Rules.", key="rule"))
    parts: dict[str, Part] = field(default_factory=dict, metadata=doc("Parts."))
    deps: tuple[Dep, ...] = field(default=(), metadata=doc("Dependencies.", key="dep"))
    pin: Pin | None = field(default=None, metadata=doc("A pin of its own."))


def _read(tmp_path: Path, text: str) -> Demo:
    path = tmp_path / "demo.toml"
    path.write_text(text, encoding="utf-8")
    return read(Demo, load_toml(path), Context(tmp_path / "base"))


def _refused(tmp_path: Path, text: str) -> str:
    with pytest.raises(RecipeError) as caught:
        _read(tmp_path, text)
    return str(caught.value).replace(f"{tmp_path / 'demo.toml'}: ", "")


def test_every_shape_is_read_into_its_field(tmp_path):
    demo = _read(tmp_path, '''
jobs = 4
rate = 2
tool = "bin/tool"
env = { A = "1" }
suffixes = { ".cu" = ".hip", ".cuh" = ".hip.h" }
sets = [[], ["a", "b"]]
defines = { ONE = "x", LIST = ["a", "b"] }
meta.name = "demo"
[[rule]]
from = "cuda"
to = "hip"
engine = "perl"
[parts.p]
default = true
platforms = ["linux", "windows"]
[[dep]]
name = "zlib"
url = "https://example.invalid/zlib.tgz"
[pin]
url = "file:///x.tgz"
subdir = "usr"
''')
    assert demo == Demo(
        name="demo", jobs=4, rate=2.0, tool=(tmp_path / "base/bin/tool").resolve(), env={"A": "1"},
        suffixes=((".cu", ".hip"), (".cuh", ".hip.h")), sets=((), ("a", "b")), defines={"ONE": "x", "LIST": "a;b"},
        rules=(Rule("cuda", "hip", "perl"),), parts={"p": Part("p", True, ("linux", "windows"))},
        deps=(Dep("zlib", Pin("https://example.invalid/zlib.tgz")),), pin=Pin("file:///x.tgz", subdir="usr"))
    assert isinstance(demo.rate, float)


def test_keys_left_out_take_the_fields_defaults(tmp_path):
    assert _read(tmp_path, '[meta]\nname = "d"\n') == Demo(name="d")


@pytest.mark.parametrize("text, said", [
    ('[meta]\nname = 3', "key 'meta.name': expected a string, got integer 3"),
    ('jobs = true\n[meta]\nname = "d"', "key 'jobs': expected an integer, got boolean True"),
    ('mode = "quick"\n[meta]\nname = "d"', "key 'mode': expected one of 'fast', 'slow', got 'quick'"),
    ('[meta]\nname = "d"\n[parts.p]\nplatforms = ["mac"]',
     "key 'parts.p.platforms[0]': expected one of linux, windows, got 'mac'"),
    ('globs = ["a", 3]\n[meta]\nname = "d"', "key 'globs[1]': expected a string, got integer 3"),
    ('globs = ["/abs"]\n[meta]\nname = "d"', "key 'globs[0]': a glob is not absolute"),
    ('sets = ["a"]\n[meta]\nname = "d"', "key 'sets[0]': expected an array of names, got string 'a'"),
    ('env = { A = 1 }\n[meta]\nname = "d"', "key 'env.A': expected a string, got integer 1"),
    ('defines = { A = 1 }\n[meta]\nname = "d"',
     "key 'defines.A': expected a string or an array of strings, got integer 1"),
    ('[meta]\nname = "d"\n[[rule]]\nfrom = ""\nto = "x"', "key 'rule[0].from': must not be empty"),
    ('[meta]\nname = "d"\n[[rule]]\nfrom = "a"', "key 'rule[0].to': required, expected a string"),
    ('[meta]\nname = "d"\n[[dep]]\nname = "z"\nurl = "x"', "key 'dep[0].url': not a URL"),
    ('[meta]\nname = "d"\n[[dep]]\nname = "z"\nurl = "a://b"\nsubdir = "s"',
     "key 'dep[0].subdir': unknown key (known keys here: name, sha256, url)"),
    ('rule = { from = "a" }\n[meta]\nname = "d"', "key 'rule': expected an array of tables, got table"),
    ('[meta]\nsummary = "s"', "key 'meta.name': required, expected a string"),
    ('[meta]\nnmae = "d"', "key 'meta.nmae': unknown key; did you mean 'name' (required, expected a string)?"),
    ('[meta]\nname = "d"\nsumary = "s"',
     "key 'meta.sumary': unknown key (did you mean 'summary'? known keys here: name, summary)"),
    ('[meta]\nname = "d"\n[pin]\nurl = "a://b"\nsha = "x"',
     "key 'pin.sha': unknown key (did you mean 'sha256'? known keys here: sha256, subdir, url)"),
])
def test_each_mistake_names_the_key_and_what_is_wrong(tmp_path, text, said):
    assert _refused(tmp_path, text) == said


def test_a_table_left_out_is_an_error_only_where_one_of_its_keys_is_required(tmp_path):
    assert _refused(tmp_path, 'jobs = 1\n') == "key 'meta': required, expected a table"


def test_an_optional_inline_class_is_read_only_where_its_required_key_is_given(tmp_path):
    @dataclass(frozen=True)
    class Source:
        path: str | None = field(default=None, metadata=doc("A folder."))
        archive: Pin | None = field(default=None, metadata=inline(omit=("subdir",)))
        subdir: str | None = field(default=None, metadata=doc("The folder built."))

    path = tmp_path / "s.toml"
    path.write_text('path = "x"\nsubdir = "y"\n')
    assert read(Source, load_toml(path)) == Source(path="x", subdir="y")
    path.write_text('url = "a://b"\nsha256 = "0"\nsubdir = "y"\n')
    assert read(Source, load_toml(path)) == Source(archive=Pin("a://b", "0"), subdir="y")


def test_the_context_is_handed_to_every_check(tmp_path):
    seen: list[Path] = []

    @dataclass(frozen=True)
    class Folder:
        name: str = field(metadata=doc("A name.", check=lambda value, site: seen.append(site.context.folder)))

    path = tmp_path / "f.toml"
    path.write_text('name = "x"\n')
    read(Folder, load_toml(path), Context(tmp_path / "elsewhere"))
    assert seen == [tmp_path / "elsewhere"]


@dataclass(frozen=True)
class Kind:
    ONE_OF: ClassVar[tuple[str, ...]] = ("path", "git")

    path: str | None = field(default=None, metadata=doc("A folder."))
    git: str | None = field(default=None, metadata=doc("A git URL."))
    commit: str | None = field(default=None, metadata=doc("With `git`: its commit."))

    def validated(self, site: Site) -> Self:
        if self.git is not None and self.commit is None:
            raise site.key("commit").error("required with 'git'")
        return self


@pytest.mark.parametrize("text, said", [
    ('pth = "x"', "table 'kind': expected exactly one of 'path', 'git', got none"),
    ('path = "x"\ngit = "y"', "table 'kind': expected exactly one of 'path', 'git', got 'path', 'git'"),
    # The hook's checks come once every key is known to be one the table takes: a typo is named as one.
    ('git = "y"\ncomit = "z"', "key 'kind.comit': unknown key (did you mean 'commit'? known keys here: commit, git, "
                               "path)"),
    ('git = "y"', "key 'kind.commit': required with 'git'"),
])
def test_a_table_of_one_kind_or_another_is_checked_before_its_keys_and_its_hook_after(tmp_path, text, said):
    path = tmp_path / "k.toml"
    path.write_text("[kind]\n" + text + "\n")
    with pytest.raises(RecipeError) as caught:
        read(Kind, load_toml(path).table("kind"))
    assert str(caught.value) == f"{path}: {said}"
