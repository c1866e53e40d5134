"""Kernel launches `kernel<<<grid, block[, shmem[, stream]]>>>(args)` rewritten as hipLaunchKernelGGL(...).

Only for recipes that ask for it (launch_syntax = "hipLaunchKernelGGL"); HIP compiles `<<<>>>` as is.
A launch that cannot be read with confidence is left as written and reported as unmapped.
"""

from __future__ import annotations

from toolkit.hipify.lexer import SCAN, split_args
from toolkit.hipify.results import FileResult, Finding


def launches_to_ggl(text: str, result: FileResult) -> str:
    positions = []
    pos = 0
    while True:
        m = SCAN.search(text, pos)
        if m is None:
            break
        pos = m.end()
        if m.lastgroup == "launch":
            positions.append(m.start())
    for at in reversed(positions):
        rewritten = _launch_at(text, at)
        if rewritten is None:
            result.unmapped.append(Finding(text.count("\n", 0, at) + 1, "<<<",
                                           "kernel launch not understood; left as <<<>>>"))
            continue
        start, end, new = rewritten
        text = text[:start] + new + text[end:]
    return text


def _launch_at(text: str, at: int) -> tuple[int, int, str] | None:
    j = _kernel_start(text, at)
    if j is None:
        return None
    kernel = text[j:at].strip()
    if not kernel or not (kernel[0].isalpha() or kernel[0] in "_:"):
        return None
    config = _launch_config(text, at + 3)
    if config is None:
        return None
    parts, i = config
    if not 2 <= len(parts) <= 4:
        return None
    open_pos = i + 3
    while open_pos < len(text) and text[open_pos] in " \t\n":
        open_pos += 1
    if not text.startswith("(", open_pos):
        return None
    parsed = split_args(text, open_pos)
    if parsed is None:
        return None
    spans, close = parsed
    grid, block = parts[0], parts[1]
    shmem = parts[2] if len(parts) > 2 else "0"
    stream = parts[3] if len(parts) > 3 else "0"
    if "<" in kernel:
        kernel = f"({kernel})"
    args = "".join(f", {text[s:e].strip()}" for s, e in spans)
    return j, close + 1, f"hipLaunchKernelGGL({kernel}, dim3({grid}), dim3({block}), {shmem}, {stream}{args})"


def _kernel_start(text: str, at: int) -> int | None:
    """Where the kernel expression before '<<<' starts: a qualified name, optionally with template arguments."""
    j = at
    while j > 0 and text[j - 1] in " \t\n":
        j -= 1
    if j > 0 and text[j - 1] == ">":
        depth = 0
        while j > 0:
            j -= 1
            if text[j] == ">":
                depth += 1
            elif text[j] == "<":
                depth -= 1
                if depth == 0:
                    break
        if depth != 0:
            return None
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_:"):
        j -= 1
    return j


def _launch_config(text: str, i: int) -> tuple[list[str], int] | None:
    """The launch configuration from position i up to '>>>': its top-level parts, and where '>>>' is."""
    depth = 0
    parts, part_start = [], i
    while i < len(text):
        if text.startswith(">>>", i) and depth == 0:
            parts.append(text[part_start:i].strip())
            return parts, i
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[part_start:i].strip())
            part_start = i + 1
        i += 1
    return None
