"""`bump`: move a recipe to another revision of its git source, and say what that takes.

In order, without touching the project until the end:
1. the revision is resolved to a commit (mirror first) and fetched, as is the pinned one;
2. the patch series is judged on it (patches.py): kept, refreshed, dropped as upstreamed, or in conflict;
3. the options both trees declare are compared (surface.py): a feature the new tree spells no way the
   recipe knows is reported with the options that may be its new name;
4. on a scratch copy of the recipe (new commit, new series), a real configure in the build root surveys the
   FetchContent requests (the provider's survey mode), the install rules and the system APIs the units call
   (survey.py); new and re-versioned dependencies are pinned (mirror first, by content) and the survey runs
   again until nothing new turns up;
5. unless --check, the copy's recipe, lock file and series are written into the project all at once.
The report (report.py) says what changed and what needs a person.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit import patching
from toolkit.apicheck.apis import ApiCheck
from toolkit.pipeline.options import BuildOptions, option_argv
from toolkit.pipeline.workspace import default_build_folder
from toolkit.recipe import features as feat
from toolkit.recipe.load import PROJECT_ROOT, Recipe, find_recipe, load_recipe
from toolkit.recipe.sources import active_deps
from toolkit.sources.context import FetchContext
from toolkit.sources.git import fetch_git
from toolkit.upstream import commit as committing
from toolkit.upstream import dep_changes as depmod
from toolkit.upstream import edit, exports, patches, surface
from toolkit.upstream.resolve import Revision, resolve
from toolkit.upstream.staging import Staging, dep_edits
from toolkit.util import log
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.fsutil import JSON

if TYPE_CHECKING:  # imported where it is used, as sources_request does
    from toolkit.sources.provider_survey import Request

MAX_SURVEYS = 3


@dataclass(frozen=True)
class BumpRequest:
    recipe: str
    to: str
    check: bool = False
    root: str | None = None  # the build root the survey configures in (None: this machine)
    # How the sources are fetched (mirrors, insecure_mirror, offline) and where the survey's work tree goes
    # (build_folder); the survey builds with these.
    build: BuildOptions = field(default_factory=BuildOptions)


@dataclass
class Bump:
    recipe: Recipe
    revision: Revision
    series: patches.SeriesPlan | None = None
    options: surface.OptionChanges | None = None
    features: list[str] = field(default_factory=list)  # what the survey configured with
    features_off: list[str] = field(default_factory=list)  # defaults the new tree does not declare
    survey: JSON | None = None
    survey_runs: int = 0
    survey_skipped: str | None = None  # why no survey ran
    deps: list[depmod.DepChange] = field(default_factory=list)
    libraries: surface.LibraryChanges | None = None
    exports: list[exports.ExportChange] = field(default_factory=list)
    apis: ApiCheck | None = None
    written: list[Path] = field(default_factory=list)
    where: str = "this machine"
    root: str | None = None  # the build root the survey was asked to configure in (--root)

    @property
    def old_commit(self) -> str:
        source = self.recipe.source
        return (source.commit or "") if source is not None else ""


def bump(req: BumpRequest) -> Bump:
    recipe = load_recipe(find_recipe(req.recipe, PROJECT_ROOT))
    source = recipe.source
    if source is None or source.kind != "git" or source.git is None or source.commit is None:
        raise ToolkitError(f"bump: recipe {recipe.name} has no git source to move ({recipe.file})",
                           hint="bump moves [source] git + commit to another revision")
    offline = req.build.offline
    ctx = FetchContext.create(recipe.file, offline=offline, mirrors=list(req.build.mirrors),
                              insecure_mirror=req.build.insecure_mirror)
    revision = resolve(source.git, req.to, ctx.mirrors, offline)
    log.info(f"bump {recipe.name}: {source.commit[:12]} -> {revision.describe()} (from {revision.where})")
    new_tree = fetch_git(source.git, revision.commit, ctx.cache, source.submodules, offline, ctx.mirrors,
                         ctx.insecure_mirror)
    old_tree = fetch_git(source.git, source.commit, ctx.cache, source.submodules, offline, ctx.mirrors,
                         ctx.insecure_mirror)
    result = Bump(recipe, revision, where=f"build root {req.root}" if req.root else "this machine", root=req.root)
    defaults = [n for n, on in feat.select_features(recipe, [], []).items() if on]
    result.options = surface.compare_options(recipe, surface.tree_options(recipe, old_tree),
                                             surface.tree_options(recipe, new_tree))
    scratch = (req.build.build_folder or default_build_folder()) / ".bump" / f"{recipe.name}-{os.getpid()}"
    staging = Staging.create(recipe, scratch)
    try:
        staging.edit_recipe(lambda text: edit.set_commit(text, revision.commit))
        if recipe.series is not None:
            series = patching.load_series(recipe.series)
            result.series = patches.plan(series, new_tree, patches.series_features(series, defaults))
            if not result.series.conflicts:
                staging.write_series(result.series)
        staging.load()  # the copy must be a valid recipe before anything builds it
        result.features, result.features_off = survey_features(recipe, new_tree, defaults)
        if result.series is not None and result.series.conflicts:
            result.survey_skipped = "the patch series does not apply to this revision (see Patches)"
        else:
            try:
                _survey_until_settled(result, staging, req, ctx)
            except ToolkitError as exc:
                result.survey_skipped = f"the survey failed: {exc}"
        if not req.check and not (result.series and result.series.conflicts):
            writes, deletes = staging.changes()
            result.written = committing.commit(PROJECT_ROOT if recipe.file.is_relative_to(PROJECT_ROOT)
                                               else staging.base, writes, deletes)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def survey_features(recipe: Recipe, tree: Path, defaults: list[str]) -> tuple[list[str], list[str]]:
    """(on, off) for the survey: every feature of this platform the new tree declares an option for, opt-in
    ones too (the survey should see what any build of it needs); defaults it does not declare go off."""
    options = surface.tree_options(recipe, tree)
    platform = feat.host_platform()
    on, off = [], []
    for name, feature in recipe.features.items():
        declared = platform in feature.platforms and any(s.define in options for s in feature.spellings)
        if declared:
            on.append(name)
        elif name in defaults:
            off.append(name)
    return on, off


def _survey_until_settled(result: Bump, staging: Staging, req: BumpRequest, ctx: FetchContext) -> None:
    """Survey, pin what is new or re-versioned, survey again; until a survey brings nothing new to pin."""
    known: dict[str, depmod.DepChange] = {}
    for _ in range(MAX_SURVEYS):
        survey = run_survey(staging, req, result.features, result.features_off)
        result.survey, result.survey_runs = survey, result.survey_runs + 1
        asked = [sources_request(item) for item in survey["fetchcontent"]]
        active = active_deps(staging.load().fetchcontent, set(result.features))
        todo = []
        for change in depmod.compare(active, asked):
            if change.kind == depmod.SAME or change.name in known:
                continue
            if change.kind == depmod.REMOVED and not survey["configure"]["ok"]:
                continue  # an unfinished configure may not have reached it yet
            if change.kind != depmod.REMOVED:
                depmod.pin(change, ctx)
            known[change.name] = change
            todo.append(change)
        dep_edits(staging, todo)
        if not any(c.content for c in todo):
            break
    result.deps = list(known.values())
    if result.survey is not None and result.survey["configure"]["ok"]:
        # An unfinished configure wrote no install rules: nothing to compare them with.
        result.libraries = surface.compare_libraries(result.survey["expected_libraries"], result.survey["libraries"])
        result.exports = exports.compare(result.survey["expected_exports"], result.survey["exports"])
        if result.survey.get("api_check"):
            result.apis = ApiCheck.from_json(result.survey["api_check"])


def sources_request(item: JSON) -> Request:
    from toolkit.sources.provider_survey import Request

    return Request(item["name"], item["served"], tuple(item["details"]))


def run_survey(staging: Staging, req: BumpRequest, features: list[str], off: list[str]) -> JSON:
    """`python -m toolkit survey` on the copy's recipe: inside the build root when one is named."""
    out = staging.root / "survey.json"
    out.unlink(missing_ok=True)
    options = replace(req.build, recipe=str(staging.recipe_file), variant="bump", with_features=tuple(features),
                      without_features=tuple(off))
    if req.root:
        from toolkit.buildroot.session import run_command

        # Inside the root the survey's work tree is the root's own build folder.
        args = [*option_argv(replace(options, build_folder=None)), "--out", str(out)]
        code = run_command(req.root, "survey", args, project=PROJECT_ROOT, binds=[staging.root], env={})
        # Exit 1 with the JSON written is a configure that failed: the report shows its errors.
        if code not in (0, 1) or not out.is_file():
            raise ToolkitError(f"bump: the survey in build root {req.root} failed (exit {code}); its output is above",
                               hint=f"run the same with `{RUN_TOOLKIT} container --root {req.root} survey ...` to "
                                    "see it")
        surveyed: JSON = json.loads(out.read_text(encoding="utf-8"))
        return surveyed
    from toolkit.upstream.survey import survey

    result = survey(options)
    assert result is not None  # only a dry run has none
    return result
