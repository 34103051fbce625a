"""What linting produces: findings, and the fixes (edits of the file's text) they carry.

Rules build them through the Rule API (``Rule.report``, ``Rule.replace``, ``Rule.fix``); the
engine builds its own findings (TRL000, TRL999) with :func:`engine_finding`.
"""

from __future__ import annotations

import enum
import traceback
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal


if TYPE_CHECKING:
    from trllint.core.source import SourceFile

Applicability = Literal["safe", "unsafe"]
# Whether a rule's findings come with a fix (a rule's `fixable`, a report's RuleDoc).
Fixable = Literal["never", "sometimes", "always"]
# Whether a rule has earned its place in the default selection (a rule's `status`, a report's
# RuleDoc): a preview rule runs only when preview is on (`--preview`, `preview = true`).
RuleStatus = Literal["stable", "preview"]

# Findings the engine raises, not a rule: (code, name).
PARSE_ERROR = ("TRL000", "unreadable-or-invalid-source")
INTERNAL_ERROR = ("TRL999", "internal-error")
# Selected by name only (``--extend-select TRL100``, ``ALL``), as Ruff's RUF100: a `# noqa` code
# that silences nothing.
UNUSED_NOQA = ("TRL100", "unused-noqa")


class ReasonKind(enum.Enum):
    """Base of a rule's kinds of verdict shown as text (why a fix is unsafe, how a branch splits
    the ranks): logic compares members, never sentences; each member's value is its text, a
    ``str.format`` template filled by :meth:`text`.

        class Unsafe(ReasonKind):
            WHOLE_TENSOR = "a gathered tensor's shape may differ per rank"
            REDUCED_OVER_DIM = "{method}(...) over a dimension leaves a tensor whose shape may differ per rank"

        Unsafe.REDUCED_OVER_DIM.text(method="sum")
    """

    def text(self, **params: object) -> str:
        return str(self.value).format(**params)


@dataclass(frozen=True)
class Edit:
    """Replace ``source.text[start:end]`` with ``content`` (offsets in characters)."""

    start: int
    end: int
    content: str
    # 1-based (line, column) of start and end, filled in when the finding is reported.
    start_position: tuple[int, int] = (0, 0)
    end_position: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class Fix:
    edits: tuple[Edit, ...]
    applicability: Applicability = "safe"
    # Why an unsafe fix may fail or change a number (shown with the finding); None when not said.
    reason: str | None = None

    @property
    def span(self) -> tuple[int, int]:
        return min(e.start for e in self.edits), max(e.end for e in self.edits)

    def located(self, source: SourceFile) -> Fix:
        def at(offset: int) -> tuple[int, int]:
            line, column = source.position(offset)
            return line, column + 1

        edits = tuple(replace(e, start_position=at(e.start), end_position=at(e.end)) for e in self.edits)
        return Fix(edits, self.applicability, self.reason)


@dataclass(frozen=True)
class Evidence:
    """One fact a finding stands on, where it is written: the wrap, the launch configuration, the
    rank test. ``path`` is as the user names it (relative to where trllint runs, else absolute);
    ``line`` is 1-based (in a notebook, a line of the notebook's program until the engine maps it
    to its cell, then ``cell`` says which)."""

    path: str
    line: int
    message: str
    cell: int | None = None


@dataclass
class Finding:
    code: str
    name: str
    message: str
    path: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    fix: Fix | None = None
    # Set on findings that the engine, not a rule, raises (TRL000, TRL999).
    internal: bool = field(default=False, compare=False)
    # In a notebook, the 1-based cell the finding is in; line and end_line then count in that cell.
    cell: int | None = None
    # The facts that made the finding (``--show-evidence``, JSON ``evidence``, SARIF ``relatedLocations``).
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)
    # Reported as a preview behaviour of its rule (``Rule.report(..., preview=True)``): the engine
    # drops it unless preview is on (``RuleSet.preview``). Like ``internal``, where the finding
    # comes from, not what it says: not compared.
    preview: bool = field(default=False, compare=False)
    # Which of its rule's kinds it is (``Rule.kinds``); "" for a rule without kinds and the engine's codes.
    kind: str = field(default="", compare=False)

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.line, self.column, self.code)


def engine_finding(kind: tuple[str, str], source_path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(
        code=kind[0],
        name=kind[1],
        message=message,
        path=source_path,
        line=line,
        column=column,
        end_line=line,
        end_column=column,
        internal=True,
    )


def describe_failure(exc: BaseException | None, prefer_file: str | None = None) -> str:
    """``Type: message at file.py:line`` on one line, whatever the exception says; the line is
    the last one in ``prefer_file`` when the traceback passes through it."""
    where = ""
    if exc is not None and exc.__traceback__ is not None:
        frames = traceback.extract_tb(exc.__traceback__)
        own = [f for f in frames if prefer_file and f.filename == prefer_file]
        frame = (own or frames)[-1]
        where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
    return " ".join(f"{type(exc).__name__}: {exc}".split()) + where
