"""``# noqa`` comments: ``# noqa: TRL001`` on the reported line drops that code, a bare ``# noqa``
all; a ``# trllint: noqa`` line (or ``# trllint: noqa: TRL001, TRL004``) exempts the whole file, as
Ruff's ``# ruff: noqa``. TRL100 (unused-noqa) names the ``# noqa`` codes that silence nothing.
"""

from __future__ import annotations

import io
import re
import tokenize

from trllint.core.findings import INTERNAL_ERROR, PARSE_ERROR, UNUSED_NOQA, Edit, Finding, Fix
from dataclasses import dataclass
from trllint.core.source import SourceFile

NOQA_COMMENT = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
# A comment line of its own: `# trllint: noqa` or `# trllint: noqa: TRL001, TRL004`.
FILE_NOQA = re.compile(
    r"#[ \t]*trllint[ \t]*:[ \t]*noqa(?:[ \t]*:[ \t]*(?P<codes>[A-Za-z]+[0-9]+(?:[ \t]*,[ \t]*[A-Za-z]+[0-9]+)*))?[ \t]*$",
    re.IGNORECASE,
)
_MENTIONS_NOQA = re.compile("noqa", re.IGNORECASE)


def last_noqa(line: str) -> re.Match[str] | None:
    """The line's last ``# noqa``: a comment ends the line, so an earlier one sits in a string."""
    match = None
    for match in NOQA_COMMENT.finditer(line):
        pass
    return match


@dataclass(frozen=True)
class NoqaComment:
    """One line's ``# noqa``: where it is on the line, and its codes (None: a bare ``# noqa``)."""

    line: int  # 1-based
    start: int  # columns of the ``# noqa...`` text on the line, 0-based
    end: int
    codes: tuple[str, ...] | None
    comment_start: int  # where the comment that holds it starts (0-based column)

    def silences(self, code: str) -> bool:
        return self.codes is None or code in {c.upper() for c in self.codes}


@dataclass(frozen=True)
class NoqaDirectives:
    """A file's noqa: each line's ``# noqa``, and the codes a ``# trllint: noqa`` line exempts the
    whole file from (an empty set: every code; None: no such line)."""

    lines: dict[int, NoqaComment]
    file: frozenset[str] | None = None


def noqa_directives(source: SourceFile) -> NoqaDirectives:
    """In Python only real comments count (tokenize), never the text of a string; a file tokenize
    cannot read falls back to each line's last ``# noqa``."""
    if not _MENTIONS_NOQA.search(source.text):
        return NoqaDirectives({})
    comments: list[tuple[int, int, str]] = []  # (line, column, the comment's text to the line's end)
    if source.is_python:
        try:
            for token in tokenize.generate_tokens(io.StringIO(source.text).readline):
                if token.type == tokenize.COMMENT:
                    comments.append((token.start[0], token.start[1], token.string))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            comments = []
        else:
            return _directives(source, comments)
    for number, text in enumerate(source.lines, 1):
        if text.lstrip().startswith("#"):  # a comment line: `# trllint: noqa` among them
            column = len(text) - len(text.lstrip())
            comments.append((number, column, text[column:]))
            continue
        match = last_noqa(text)
        if match is not None:
            comments.append((number, match.start(), text[match.start() :]))
    return _directives(source, comments)


def _directives(source: SourceFile, comments: list[tuple[int, int, str]]) -> NoqaDirectives:
    lines: dict[int, NoqaComment] = {}
    every, exempt = False, set()
    for line, column, text in comments:
        own_line = not source.lines[line - 1][:column].strip()
        whole_file = FILE_NOQA.match(text) if own_line else None
        if whole_file is not None:
            codes = whole_file.group("codes")
            if codes is None:
                every = True
            else:
                exempt |= {c.strip().upper() for c in codes.split(",")}
            continue
        match = last_noqa(text)
        if match is not None:
            codes = match.group("codes")
            listed = tuple(c.strip() for c in codes.split(",")) if codes is not None else None
            lines[line] = NoqaComment(line, column + match.start(), column + match.end(), listed, column)
    exemption = frozenset() if every else (frozenset(exempt) if exempt else None)
    return NoqaDirectives(lines, exemption)


def without_suppressed(findings: list[Finding], source: SourceFile, directives: NoqaDirectives | None = None) -> list[Finding]:
    """The findings no noqa comment suppresses; the engine's own (TRL000, TRL999) always stay."""
    directives = noqa_directives(source) if directives is None else directives
    exempt = directives.file
    kept = []
    for finding in findings:
        if finding.internal:
            kept.append(finding)
            continue
        if exempt is not None and (not exempt or finding.code in exempt):
            continue
        comment = directives.lines.get(finding.line)
        if comment is None or not comment.silences(finding.code):
            kept.append(finding)
    return kept


def unused_noqa(
    findings: list[Finding], source: SourceFile, comments: dict[int, NoqaComment], *, enabled: frozenset[str], known: frozenset[str]
) -> list[Finding]:
    """TRL100 findings: the trllint codes of ``# noqa`` comments that silence nothing on their
    line, as Ruff's RUF100: a code of a rule the run has on (``enabled``) that reported nothing
    there, a code of a rule that is not on for the file (not selected, or switched off for it by
    ``per-file-ignores``: Ruff's "non-enabled"), and a code no rule has. A bare ``# noqa``, other
    tools' codes (``E501``) and the engine's own codes (TRL000, TRL999: no ``# noqa`` silences
    them) are not judged."""
    reported: dict[int, set[str]] = {}
    for finding in findings:
        reported.setdefault(finding.line, set()).add(finding.code)
    stale_findings = []
    for line, comment in sorted(comments.items()):
        if comment.codes is None:
            continue
        stale = [
            code
            for code in comment.codes
            if code.upper().startswith("TRL")
            and code.upper() != UNUSED_NOQA[0]
            and code.upper() not in _ENGINE_CODES
            and code.upper() not in reported.get(line, set())
        ]
        if stale:
            stale_findings.append(_unused_finding(source, comment, stale, enabled, known))
    return stale_findings


# Reported whatever the selection, and never silenced by a `# noqa` (``without_suppressed``).
_ENGINE_CODES = frozenset({PARSE_ERROR[0], INTERNAL_ERROR[0]})


def _unused_finding(
    source: SourceFile, comment: NoqaComment, stale: list[str], enabled: frozenset[str], known: frozenset[str]
) -> Finding:
    unused = [c.upper() for c in stale if c.upper() in enabled]
    not_enabled = [c.upper() for c in stale if c.upper() in known and c.upper() not in enabled]
    unknown = [c.upper() for c in stale if c.upper() not in known]
    parts = []
    if unused:
        parts.append(f"nothing on this line is reported as {', '.join(unused)}")
    if not_enabled:
        verb = "is" if len(not_enabled) == 1 else "are"
        parts.append(f"{', '.join(not_enabled)} {verb} not enabled for this file")
    if unknown:
        parts.append(f"no rule has the code {', '.join(unknown)}")
    message = f"unused `noqa` code: {'; '.join(parts)}"
    line_start = source.line_starts[comment.line - 1]
    return Finding(
        code=UNUSED_NOQA[0],
        name=UNUSED_NOQA[1],
        message=message,
        path=source.display_path,
        line=comment.line,
        column=comment.start + 1,
        end_line=comment.line,
        end_column=comment.end + 1,
        fix=_without_stale(source, comment, stale, line_start),
    )


def _without_stale(source: SourceFile, comment: NoqaComment, stale: list[str], line_start: int) -> Fix | None:
    """The comment without its stale codes; the whole comment gone when nothing else is in it.
    Safe: a comment changes nothing the program does."""
    assert comment.codes is not None
    kept = [c for c in comment.codes if c not in stale]
    start, end = line_start + comment.start, line_start + comment.end
    if kept:
        edit = Edit(start, end, f"# noqa: {', '.join(kept)}")
        return Fix((edit,)).located(source)
    line = source.lines[comment.line - 1]
    if line[comment.end :].strip():
        return None  # text after the codes (`# noqa: TRL001 -- why`): what to keep is the author's call
    before = line[: comment.start].rstrip(" \t")
    if comment.start > comment.comment_start and before.endswith("#"):
        return None  # `#  # noqa: ...`-like debris: leave it to the author
    # From the end of whatever precedes it (code, or another comment such as `# type: ignore`).
    edit = Edit(line_start + len(before), end, "")
    return Fix((edit,)).located(source)
