"""The Markdown report of a bump: what a reviewer reads before merging the new pin (or what a scheduled
CI job posts when the revision needs a person)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.recipe.load import PROJECT_ROOT
from toolkit.upstream import dep_changes as depmod
from toolkit.upstream import patches
from toolkit.util.errors import RUN_TOOLKIT

if TYPE_CHECKING:
    from toolkit.upstream.bump import Bump

_ACTION_TEXT = {
    patches.KEEP: "keep", patches.REFRESH: "refresh (regenerated)", patches.DROP: "drop (upstream has it)",
    patches.CONFLICT: "**conflict**", patches.NOT_NEEDED: "skip (not needed here)",
    patches.NOT_CHECKED: "not checked",
}


def _rel(path: Path) -> str:
    path = Path(path)
    return path.relative_to(PROJECT_ROOT).as_posix() if path.is_relative_to(PROJECT_ROOT) else str(path)


def _selecting(b: Bump, name: str) -> str:
    """`patch` options that take patch `name` as a build would: the recipe, and the features its when= needs
    (the bump judged every patch, a build with the defaults might leave this one out)."""
    assert b.series is not None  # asked only about a patch of the series
    when = next((e.when for e in b.series.series.entries if e.name == name), ())
    flags = [f"--without-{w[1:]}" if w.startswith("!") else f"--with-{w}" for w in when]
    return " ".join(["--recipe", b.recipe.name, *flags])


def human_items(b: Bump) -> list[str]:
    """Each thing a person must do or decide, as one line saying what and how."""
    items = []
    for v in b.series.conflicts if b.series else []:
        chosen = _selecting(b, v.name)
        items.append(f"patch {v.name} does not apply ({v.summary}): on a copy of the new tree run `{RUN_TOOLKIT} "
                     f"patch apply --partial {chosen} COPY`, make its failed hunks by hand, then `{RUN_TOOLKIT} "
                     f"patch refresh {chosen} PRISTINE COPY`; or drop it if upstream made the change")
    for v in b.series.verdicts if b.series else []:
        if v.action == patches.REFRESH and "fuzz" in v.summary:
            items.append(f"patch {v.name} applied only with fuzz ({v.summary.removeprefix('applies with ')}): it "
                         f"was regenerated from where it landed; check the new patch does what the old one did")
    for f in b.options.lost if b.options else []:
        default = b.recipe.features[f.feature].default
        effect = "the default build fails" if default else f"builds with --with-{f.feature} fail up front"
        maybe = f" (maybe {', '.join(f.candidates)})" if f.candidates else ""
        items.append(f"feature {f.feature}: the tree no longer declares {f.old}{maybe}; {effect} until "
                     f"features.{f.feature} of {b.recipe.name} (or the file it extends) gets the new spelling")
    for c in b.deps:
        if c.problem:
            items.append(f"FetchContent {c.name} ({c.kind}, the tree declares {c.declared}): {c.problem}; add it "
                         f"to the mirror, then bump again (or list it by hand and run `nox -s lock`)")
    if b.survey is None and b.survey_skipped and not (b.series and b.series.conflicts):
        reason = b.survey_skipped.splitlines()[0]
        if b.root is None:
            items.append(f"the CMake surface was not surveyed ({reason}); pass --root debian-sid-rocm to "
                         f"configure in the build root")
        else:  # --root was given: the survey ran (or failed to start) there; saying "pass --root" misleads
            items.append(f"the CMake surface was not surveyed in build root {b.root} ({reason}); fix what "
                         f"stopped it, then bump again with the same --root")
    if b.survey is not None and not b.survey["configure"]["ok"]:
        items.append(f"the configure in {b.where} fails (see CMake errors below)")
    if b.libraries is not None:
        items += [f"library lib{old}.so is now lib{new}.so: rename it in the recipe's [[outputs]] (or the feature's "
                  f"spelling) and [[wheel.components]]" for old, new in b.libraries.renamed]
        items += [f"library lib{name}.so is no longer installed by the tree" for name in b.libraries.missing]
    items += [f"library lib{c.library}.so: its version script adds {_symbols(c.added) or 'nothing'} and drops "
              f"{_symbols(c.removed) or 'nothing'} against the recipe's exports; the check stage refuses the build "
              f"until [[outputs]] exports say the same (or a patch keeps the old list)" for c in b.exports]
    if b.apis is not None:
        items += [f"{line}: the build stops at api-check; build with a newer library or patch the tree"
                  for line in b.apis.problems()]
    return items


def markdown(b: Bump, check: bool) -> str:
    human = human_items(b)
    head = f"# bump {b.recipe.name}: {b.old_commit[:12]} -> {b.revision.commit[:12]}"
    state = "**needs a person**" if human else "**automatic**: nothing needs a person"
    if check:
        wrote = "nothing written (--check)"
    elif b.written:
        wrote = "written: " + ", ".join(f"`{_rel(p)}`" for p in b.written)
    else:
        wrote = "nothing written" + (" (the series does not apply)" if b.series and b.series.conflicts else
                                     " (nothing changed)")
    out = [head, "", f"- revision: `{b.revision.describe()}` (from `{b.revision.where}`)", f"- verdict: {state}",
           f"- files: {wrote}", ""]
    if human:
        out += ["## Needs a person", ""] + [f"- {item}" for item in human] + [""]
    out += _patches(b) + _options(b) + _deps(b) + _libraries(b) + _exports(b) + _apis(b)
    return "\n".join(out).rstrip() + "\n"


def _patches(b: Bump) -> list[str]:
    if b.series is None:
        return []
    out = [f"## Patches (`{_rel(b.series.series.path)}`)", "", "| patch | action | analysis on the new revision |",
           "| --- | --- | --- |"]
    out += [f"| {v.name} | {_ACTION_TEXT[v.action]} | {v.summary.replace('|', '/')} |" for v in b.series.verdicts]
    for v in b.series.conflicts:
        out += ["", f"{v.name}:", "", "```", *v.details, "```"]
    return out + [""]


def _options(b: Bump) -> list[str]:
    o = b.options
    assert o is not None  # bump() compares the options before anything else
    out = ["## CMake options", ""]
    out.append(f"- added: {', '.join(f'`{n}`' for n in o.added) or 'none'}")
    out.append(f"- removed: {', '.join(f'`{n}`' for n in o.removed) or 'none'}")
    for f in o.features:
        if f.new is None:
            cand = f"; candidates: {', '.join(f'`{c}`' for c in f.candidates)}" if f.candidates else ""
            out.append(f"- feature `{f.feature}`: `{f.old}` is gone, no spelling of the recipe is declared{cand}")
        else:
            out.append(f"- feature `{f.feature}`: now spelled `{f.new}` (was `{f.old or 'undeclared'}`), a spelling "
                       f"the recipe knows")
    return out + [""]


def _deps(b: Bump) -> list[str]:
    if b.survey is None:
        return ["## FetchContent dependencies", "", f"Not surveyed: {b.survey_skipped or 'no survey ran'}.", ""]
    runs = f"{b.survey_runs} configure(s)"
    out = ["## FetchContent dependencies", "",
           f"From the dependency provider's survey of a real configure in {b.where} ({runs}; features "
           f"{', '.join(b.features)}). Unchanged: {len(b.survey['fetchcontent']) - len(b.deps)} of "
           f"{len(b.survey['fetchcontent'])} requests."]
    if b.deps:
        out += ["", "| dependency | change | the tree declares | recipe URL now | pin |",
                "| --- | --- | --- | --- | --- |"]
        for c in b.deps:
            version = f"{c.old_version} -> {c.new_version}" if c.kind == depmod.REVERSIONED else c.kind
            pin = f"content `{c.content[:16]}...`" if c.content else (c.problem or "")
            out.append(f"| {c.name} | {version} | {c.declared or '-'} | {c.new_url or c.recipe_url or '-'} | {pin} |")
    if not b.survey["configure"]["ok"]:
        out += ["", "CMake errors:", "", "```", *b.survey["configure"]["tail"], "```"]
    return out + [""]


def _libraries(b: Bump) -> list[str]:
    lib = b.libraries
    if lib is None:
        return []
    out = ["## Libraries (the tree's install rules)", "",
           f"- the recipe expects: {', '.join(f'`lib{n}.so`' for n in lib.expected)}",
           f"- the tree installs: {', '.join(f'`lib{n}.so`' for n in lib.installed) or 'nothing'}"]
    out += [f"- renamed: `lib{a}.so` -> `lib{c}.so`" for a, c in lib.renamed]
    out += [f"- no longer installed: `lib{n}.so`" for n in lib.missing]
    out += [f"- also installed (not in the recipe): `lib{n}.so`" for n in lib.extra]
    return out + [""]


def _symbols(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _exports(b: Bump) -> list[str]:
    if b.survey is None or "exports" not in b.survey:
        return []
    declared = b.survey["exports"]
    out = ["## Exports (the version scripts the link is given)", ""]
    for library, symbols in sorted(declared.items()):
        out.append(f"- `lib{library}.so`: " + (_symbols(symbols) if symbols is not None else
                                              "no version script (what the compiler leaves visible)"))
    for c in b.exports:
        out.append(f"- **changed** `lib{c.library}.so` against the recipe: added {_symbols(c.added) or 'none'}, "
                   f"removed {_symbols(c.removed) or 'none'}")
    return out + [""]


def _apis(b: Bump) -> list[str]:
    a = b.apis
    if a is None:
        return []
    out = ["## System APIs (the headers the compile uses)", ""]
    out += [f"- {facts.describe()}" for facts in a.libraries.values()]
    out.append(f"- {a.files} file(s) read (units and the tree headers they include)")
    note = (b.survey or {}).get("api_check", {}).get("note")
    if note:
        out.append(f"- note: {note}")
    out += [f"- **missing**: {line}" for line in a.problems()]
    out += [f"- guarded by `{m.guard}` (the tree copes without it): {m.line(a.found_in(m.library))}"
            for m in a.guarded]
    return out + [""]
