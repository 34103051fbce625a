"""What linting one file gives back, and how a run treats files: plain data, importing no LibCST
and no rule, so that a warm run (every result read from the cache) never imports either."""

from __future__ import annotations

from dataclasses import dataclass, field

from trllint.core.findings import Finding


@dataclass
class Mode:
    fix: bool = False
    diff: bool = False
    unsafe: bool = False
    # The process ends right after the file (trllint.app.cli.entry, one file): its tree and facts
    # are left to the exit, not freed object by object (a long script's tree is many objects).
    keep_until_exit: bool = False

    @property
    def rewrites(self) -> bool:
        return self.fix or self.diff


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixed: int = 0
    problems: list[str] = field(default_factory=list)
    # Said on standard error without failing the run (a file past the size limit, not linted).
    warnings: list[str] = field(default_factory=list)
    # The codes of the fixes applied, one entry per fix (``--show-fixes``).
    fixed_codes: list[str] = field(default_factory=list)
    diff: str = ""
    unsafe_applied: list[Finding] = field(default_factory=list)  # fixed by an unsafe fix
    new_text: bytes | None = None  # the fixed bytes (returned for standard input only)
    sha256: str | None = None  # of the bytes that were linted, when the cache asked for it (``digest``)
    # Other modules of the project whose summaries the findings read: path -> content hash. A
    # cached result holds only while each of them is unchanged.
    dependencies: dict[str, str] = field(default_factory=dict)
