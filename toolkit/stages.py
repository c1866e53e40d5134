"""The stage engine: run an ordered list of stages, skipping those whose inputs did not change.

A stage declares its inputs (a JSON-able dict: parameters, digests of the files it reads) and its outputs
(paths). Its fingerprint is the hash of its inputs and of the fingerprint of the stage before it, so a
change anywhere upstream reruns everything downstream, and nothing else. The fingerprint is recorded in
state/<stage>.json only after the stage succeeded, written atomically: an interrupted stage runs again.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from toolkit import log
from toolkit.fsutil import atomic_write_text


@dataclass
class Stage:
    name: str
    # Computed lazily: inputs may depend on what earlier stages produced.
    inputs: Callable[[], dict]
    outputs: list[Path]
    run: Callable[[], None]
    # Plan lines for --dry-run: every command, define and path the stage would use.
    plan: Callable[[], list[str]] = field(default=lambda: [])


@dataclass
class StageResult:
    name: str
    fingerprint: str
    ran: bool
    seconds: float


def fingerprint(inputs: dict, upstream: str) -> str:
    blob = json.dumps({"inputs": inputs, "upstream": upstream}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class StageRunner:
    def __init__(self, state_dir: Path, dry_run: bool = False, force: bool = False):
        self.state_dir = state_dir
        self.dry_run = dry_run
        self.force = force

    def _state_file(self, name: str) -> Path:
        return self.state_dir / f"{name}.json"

    def recorded(self, name: str) -> str | None:
        try:
            return json.loads(self._state_file(name).read_text())["fingerprint"]
        except (OSError, ValueError, KeyError):
            return None

    def run(self, stages: list[Stage]) -> list[StageResult]:
        results: list[StageResult] = []
        upstream = ""
        upstream_changed = False
        for stage in stages:
            if self.dry_run and upstream_changed:
                # Inputs of later stages may not be computable before earlier ones ran for real.
                fp, why = "", "would run: an earlier stage runs first"
            else:
                fp = fingerprint(stage.inputs(), upstream)
                why = self._why_run(stage, fp)
            if self.dry_run:
                if why and not why.startswith("would run"):
                    why = f"would run: {why}"
                log.stage(stage.name, why if why else "unchanged, would skip")
                for line in stage.plan():
                    print(f"  {stage.name}: {line}")
                results.append(StageResult(stage.name, fp, bool(why), 0.0))
                upstream_changed = upstream_changed or bool(why)
                upstream = fp
                continue
            if not why:
                log.stage(stage.name, f"skipped (inputs unchanged, fingerprint {fp[:12]})")
                results.append(StageResult(stage.name, fp, False, 0.0))
                upstream = fp
                continue
            log.stage(stage.name, f"running ({why})")
            start = time.monotonic()
            self._state_file(stage.name).unlink(missing_ok=True)
            stage.run()
            seconds = time.monotonic() - start
            atomic_write_text(
                self._state_file(stage.name),
                json.dumps({"fingerprint": fp, "seconds": round(seconds, 3)}, indent=2) + "\n",
            )
            log.stage(stage.name, f"done in {seconds:.1f}s")
            results.append(StageResult(stage.name, fp, True, seconds))
            upstream = fp
        return results

    def _why_run(self, stage: Stage, fp: str) -> str:
        if self.force:
            return "forced"
        recorded = self.recorded(stage.name)
        if recorded is None:
            return "first run"
        if recorded != fp:
            return "inputs changed"
        missing = [p for p in stage.outputs if not p.exists()]
        if missing:
            return f"output missing: {missing[0]}"
        return ""
