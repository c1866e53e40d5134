"""A download progress bar on stderr: redrawn in place on a terminal, a few plain lines otherwise.

Logs of CI runs get a start line, one line per 10% when the size is known, and an end line, instead of
thousands of carriage returns. A small download (under SMALL bytes, size known) gets its end line only: it is
over before anyone could read the rest.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from toolkit.util import log

SMALL = 1 << 20


class Progress:
    def __init__(self, label: str, total: int | None, start: int = 0, stream: TextIO | None = None,
                 enabled: bool = True):
        self.label = label
        self.total = total
        self.done = start
        self.stream = stream or sys.stderr
        # -q silences progress like every other message (log keeps the flag).
        self.enabled = enabled and not log.is_quiet()
        self.small = total is not None and total - start < SMALL
        self.tty = self.enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_draw = 0.0
        self._last_tenth = start * 10 // total if total else 0
        self._started = time.monotonic()
        if self.enabled and not self.tty and not self.small:
            what = log.human_size(total) if total else "unknown size"
            resumed = f", resuming at {log.human_size(start)}" if start else ""
            print(f"[toolkit] downloading {label} ({what}{resumed})", file=self.stream, flush=True)

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled or self.small:
            return
        if self.tty:
            now = time.monotonic()
            if now - self._last_draw >= 0.1:
                self._last_draw = now
                self._draw()
        elif self.total:
            tenth = self.done * 10 // self.total
            if tenth > self._last_tenth and tenth < 10:
                self._last_tenth = tenth
                print(f"[toolkit]   {tenth * 10}% of {self.label}", file=self.stream, flush=True)

    def _draw(self) -> None:
        if self.total:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(frac * 30)
            text = (f"\r{self.label[-40:]:<40} [{bar:<30}] {frac:4.0%} "
                    f"{log.human_size(self.done)}/{log.human_size(self.total)}")
        else:
            text = f"\r{self.label[-40:]:<40} {log.human_size(self.done)}"
        self.stream.write(text)
        self.stream.flush()

    def finish(self, ok: bool) -> None:
        if not self.enabled:
            return
        elapsed = time.monotonic() - self._started
        if self.tty and not self.small:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
        status = "done" if ok else "stopped"
        print(f"[toolkit] {status}: {self.label} ({log.human_size(self.done)} in {elapsed:.1f} s)", file=self.stream,
              flush=True)
