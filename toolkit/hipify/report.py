"""What a hipify run did: counts, every unmapped CUDA name with file:line, warnings, exclusions."""

from __future__ import annotations

from dataclasses import dataclass, field

from toolkit.util.errors import ToolkitError


@dataclass(frozen=True)
class Located:
    """A finding or warning with the input file it came from (relative to the source tree)."""
    file: str
    line: int
    kind: str  # "unmapped" or a warning kind (lane-math, lane-mask, shfl-width, cuda-arch, hipify-perl)
    name: str
    message: str

    def __str__(self) -> str:
        if self.kind == "unmapped":
            return f"{self.file}:{self.line}: unmapped '{self.name}': {self.message}"
        return f"{self.file}:{self.line}: {self.kind}: {self.message}"


@dataclass
class HipifyReport:
    engine: str
    total: int = 0
    converted: list[str] = field(default_factory=list)  # inputs converted this run
    written: list[str] = field(default_factory=list)  # outputs whose bytes changed (others kept mtime)
    unchanged: int = 0  # inputs served from the cache
    removed: list[str] = field(default_factory=list)  # stale outputs deleted
    excluded: list[tuple[str, str]] = field(default_factory=list)  # (input, reason)
    ignored: int = 0  # files the include globs do not select
    unmapped: list[Located] = field(default_factory=list)
    warnings: list[Located] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)  # input -> output, relative paths
    unused_substitutions: list[str] = field(default_factory=list)  # a line per rule that changed no file
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{self.total} files: {len(self.converted)} converted, {self.unchanged} unchanged, "
                f"{len(self.excluded)} excluded, {self.ignored} not selected; "
                f"{len(self.unmapped)} unmapped, {len(self.warnings)} warnings ({self.seconds:.2f} s)")

    def lines(self, warnings: bool = True) -> list[str]:
        out = [self.summary()]
        out += [f"excluded {path}: {reason}" for path, reason in self.excluded]
        out += [str(u) for u in self.unmapped]
        if warnings:
            out += [str(w) for w in self.warnings]
        return out

    def check_strict(self) -> None:
        """Strict mode: any unmapped CUDA name is an error that lists them all; so is a substitution that
        matched nothing (a fix-up the tree never got)."""
        if self.unused_substitutions:
            listing = "\n".join(f"  {line}" for line in self.unused_substitutions)
            raise ToolkitError(f"hipify: {len(self.unused_substitutions)} substitution(s) matched nothing "
                               f"(strict mode):\n{listing}",
                               "fix or remove each rule: its `from` must be text of the converted file (look in "
                               "the hipified tree), and its `glob` must select that file")
        if not self.unmapped:
            return
        listing = "\n".join(f"  {u}" for u in self.unmapped[:50])
        more = f"\n  ... and {len(self.unmapped) - 50} more" if len(self.unmapped) > 50 else ""
        # hipify-perl maps names by its own list: the toolkit's tables are read by the built-in engine only.
        mapping = ("fix it with a [[hipify.substitute]] rule (hipify-perl does not read the toolkit's tables; the "
                   "built-in engine, hipify.engine = \"builtin\", does), or exclude the file with a reason "
                   "([[hipify.exclude]])" if self.engine == "hipify-perl" else
                   "add the mapping to toolkit/hipify/tables, exclude the file with a reason "
                   "([[hipify.exclude]]), or fix it with a [[hipify.substitute]] rule")
        raise ToolkitError(
            f"hipify: {len(self.unmapped)} CUDA identifier(s) left unmapped (strict mode):\n{listing}{more}", mapping)
