"""The stage runner: run an ordered list of stages, skipping those whose inputs and outputs did not change.

A stage declares its inputs (a JSON-able dict: parameters, digests of the files it reads) and its outputs
(paths). Its fingerprint is the hash of its inputs and of what the stage before it produced, so a change
anywhere upstream reruns everything downstream, and nothing else. After a stage succeeded, and only if
every output exists, state/<stage>.json records the fingerprint and a record of each output (written
atomically): an interrupted stage, or one whose outputs were changed or removed since, runs again.

Output records are cheap to check: a file keeps its size, mtime and sha256, and the sha256 is computed
again only when the size matches but the mtime does not; a folder keeps one digest of every entry's path,
type, size and mtime (hashing a whole source tree's contents on every run would cost more than a build).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text, sha256_file

if TYPE_CHECKING:
    from toolkit.pipeline.build import Build
    from toolkit.pipeline.produced import Produced


@dataclass
class Stage:
    name: str
    # Computed lazily: inputs may depend on what earlier stages produced.
    inputs: Callable[[], JSON]
    outputs: list[Path]
    run: Callable[[], None]
    # Plan lines for --dry-run: every command, define and path the stage would use.
    plan: Callable[[], list[str]] = field(default=lambda: [])
    # Called once the stage ran, was skipped or (dry run) planned: where it hands on what it made
    # (pipeline/produced.py), for the stages after it.
    done: Callable[[], None] = field(default=lambda: None)


@dataclass(frozen=True)
class StageSpec:
    """A stage as its adapter (pipeline/adapters/) declares it: its name, how to make it, when a build has it."""

    name: str
    # One line for `build --help`, the dry run and the stage reference.
    summary: str
    make: Callable[[Build, Produced], Stage]
    # Whether this build has the stage at all (its recipe section exists, the series has such patches, ...); a
    # recipe's [recipe] stages list leaves out any stage besides (pipeline/stages.py).
    applies: Callable[[Build], bool] = lambda b: True
    # Only when a wheel is asked for (--wheel, --smoke, release builds).
    packaging: bool = False
    # The stage a recipe's [recipe] stages list names for this one too: fetchcontent is kept with configure.
    part_of: str | None = None


@dataclass
class StageResult:
    name: str
    fingerprint: str
    ran: bool
    seconds: float


def fingerprint(inputs: JSON, upstream: str) -> str:
    blob = json.dumps({"inputs": inputs, "upstream": upstream}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


# -- output records ----------------------------------------------------------------------------

def _tree_stat_digest(root: Path) -> tuple[str, int]:
    """Digest of every entry under root (path, type, size, mtime, exec bit, link target) and the file count."""
    digest = hashlib.sha256()
    count = 0
    pending = [("", str(root))]
    while pending:
        rel_dir, full_dir = pending.pop()
        with os.scandir(full_dir) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                line = f"d {rel}"
                pending.append((rel + "/", entry.path))
            elif stat.S_ISLNK(st.st_mode):
                line = f"l {rel} {os.readlink(entry.path)}"
            else:
                count += 1
                line = f"f {rel} {st.st_size} {st.st_mtime_ns} {st.st_mode & 0o111:o}"
            digest.update(line.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest(), count


def output_record(path: Path) -> JSON | None:
    """What a stage left at `path`, or None when nothing is there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        tree, files = _tree_stat_digest(path)
        return {"kind": "dir", "tree": tree, "files": files}
    return {"kind": "file", "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256_file(path)}


def output_change(path: Path, recorded: JSON) -> str:
    """Why `path` no longer is what was recorded, or '' when it is. May refresh a file's recorded mtime."""
    try:
        st = os.stat(path)
    except OSError:
        return f"output missing: {path}"
    if recorded.get("kind") == "dir":
        if not stat.S_ISDIR(st.st_mode):
            return f"output changed: {path} is no longer a folder"
        return "" if _tree_stat_digest(path)[0] == recorded.get("tree") else \
            f"output changed: files in {path} were added, removed or modified"
    if not stat.S_ISREG(st.st_mode) or st.st_size != recorded.get("size"):
        return f"output changed: {path}"
    if st.st_mtime_ns != recorded.get("mtime_ns"):
        # Touched, or rewritten with the same size: only the content can tell.
        if sha256_file(path) != recorded.get("sha256"):
            return f"output changed: {path}"
        recorded["mtime_ns"] = st.st_mtime_ns
    return ""


def _produced(fp: str, outputs: dict[str, JSON]) -> str:
    """What the next stage's fingerprint builds on: this stage's fingerprint and its outputs' content."""
    identity = {p: r.get("sha256") or r.get("tree") for p, r in sorted(outputs.items())}
    if not identity:
        return fp
    return hashlib.sha256(json.dumps([fp, identity], sort_keys=True).encode()).hexdigest()


def hand_on(stages: list[Stage]) -> list[Stage]:
    """Each stage with only the outputs it leaves as they are: one that a later stage of the same run rewrites
    (the source stage's tree, which the patch stage patches) is the later stage's to record and check, so the
    earlier stage is not run again because the later one changed it."""
    later: set[Path] = set()
    handed: list[Stage] = []
    for stage in reversed(stages):
        kept = [p for p in stage.outputs if p not in later]
        handed.append(stage if kept == stage.outputs else dataclasses.replace(stage, outputs=kept))
        later.update(stage.outputs)
    return handed[::-1]


class StageRunner:
    def __init__(self, state_dir: Path, dry_run: bool = False, force: bool = False):
        self.state_dir = state_dir
        self.dry_run = dry_run
        self.force = force

    def _state_file(self, name: str) -> Path:
        return self.state_dir / f"{name}.json"

    def _state(self, name: str) -> JSON | None:
        try:
            state = json.loads(self._state_file(name).read_text())
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) and isinstance(state.get("fingerprint"), str) else None

    def recorded(self, name: str) -> str | None:
        state = self._state(name)
        return state["fingerprint"] if state else None

    def run(self, stages: list[Stage]) -> list[StageResult]:
        stages = hand_on(stages)
        results: list[StageResult] = []
        upstream = ""
        upstream_changed = False
        for stage in stages:
            state = None
            if self.dry_run and upstream_changed:
                # Inputs of later stages may not be computable before earlier ones ran for real.
                fp, why = "", "would run: an earlier stage runs first"
            else:
                fp = fingerprint(stage.inputs(), upstream)
                state = self._state(stage.name)
                why = self._why_run(stage, fp, state)
            if self.dry_run:
                if why and not why.startswith("would run"):
                    why = f"would run: {why}"
                log.stage(stage.name, why if why else "unchanged, would skip")
                for line in stage.plan():
                    print(f"  {stage.name}: {line}")
                stage.done()
                results.append(StageResult(stage.name, fp, bool(why), 0.0))
                upstream_changed = upstream_changed or bool(why)
                upstream = _produced(fp, state.get("outputs", {})) if state and not why else fp
                continue
            if not why:
                assert state is not None  # _why_run says "first run" without one
                log.stage(stage.name, f"skipped (inputs unchanged, fingerprint {fp[:12]})")
                results.append(StageResult(stage.name, fp, False, 0.0))
                upstream = _produced(fp, state["outputs"])
                stage.done()
                continue
            log.stage(stage.name, f"running ({why})")
            start = time.monotonic()
            self._state_file(stage.name).unlink(missing_ok=True)
            stage.run()
            seconds = time.monotonic() - start
            outputs = self._record_outputs(stage)
            self._write_state(stage.name, {"fingerprint": fp, "seconds": round(seconds, 3), "outputs": outputs})
            log.stage(stage.name, f"done in {seconds:.1f}s")
            stage.done()
            results.append(StageResult(stage.name, fp, True, seconds))
            upstream = _produced(fp, outputs)
        return results

    def _write_state(self, name: str, state: JSON) -> None:
        atomic_write_text(self._state_file(name), json.dumps(state, indent=2, sort_keys=True) + "\n")

    def _record_outputs(self, stage: Stage) -> dict[str, JSON]:
        """A record of every output; a stage that left one missing is not done."""
        outputs = {}
        for path in stage.outputs:
            record = output_record(path)
            if record is None:
                raise ToolkitError(f"stage {stage.name} finished without producing {path}",
                                   hint="its output is needed by the stages after it; the stage will run again")
            outputs[str(path)] = record
        return outputs

    def _why_run(self, stage: Stage, fp: str, state: JSON | None) -> str:
        if self.force:
            return "forced"
        if state is None:
            return "first run"
        if state["fingerprint"] != fp:
            return "inputs changed"
        outputs = state.get("outputs")
        if not isinstance(outputs, dict) or set(outputs) != {str(p) for p in stage.outputs}:
            return "outputs not recorded"
        before = json.dumps(outputs, sort_keys=True)
        for path in stage.outputs:
            why = output_change(path, outputs[str(path)])
            if why:
                return why
        if not self.dry_run and json.dumps(outputs, sort_keys=True) != before:
            self._write_state(stage.name, state)  # a touched file with the same content: save hashing it again
        return ""
