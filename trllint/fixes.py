"""Applying fixes the way Ruff does, and writing files so that nothing is ever half-written.

A round applies the non-overlapping edits of the findings' fixes, re-parses and re-lints; an edit
that overlaps one already taken waits for the next round. Rounds go on until nothing changes (at
most ``MAX_ROUNDS``). A round whose result does not parse is thrown away: the file keeps its last
good text and the failure is reported. Writing goes through a temporary file in the same folder
and ``os.replace``, so a reader (or a crash) sees the old bytes or the new, never a mixture.
"""

from __future__ import annotations

import glob
import os
import re
import stat
import tomllib
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst

from trllint.rule import Edit, Finding, Fix
from trllint.runner import RuleSet, lint_source
from trllint.source import SourceFile

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    text: str
    findings: list[Finding]  # what remains after fixing
    applied: int = 0
    problems: list[str] = field(default_factory=list)
    # The findings whose unsafe fixes were applied (their Fix says why it is unsafe).
    unsafe_applied: list[Finding] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.applied > 0


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    return fix is not None and (fix.applicability == "safe" or unsafe)


def choose_edits(fixes: list[Fix]) -> tuple[list[Fix], list[Edit]]:
    """The fixes of one round: whole fixes whose edits overlap nothing taken before them."""
    taken: list[Fix] = []
    edits: list[Edit] = []
    for fix in sorted(fixes, key=lambda f: f.span):
        if any(_overlaps(e, other) for e in fix.edits for other in edits):
            continue
        if any(_overlaps(a, b) for i, a in enumerate(fix.edits) for b in fix.edits[i + 1 :]):
            continue
        taken.append(fix)
        edits.extend(fix.edits)
    return taken, sorted(edits, key=lambda e: (e.start, e.end))


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start < b.end and b.start < a.end:
        return True
    # An insertion at the edge of (or at the same point as) another edit: the order is ambiguous.
    return (a.start == a.end and b.start <= a.start <= b.end) or (
        b.start == b.end and a.start <= b.start <= a.end
    )


_BARE_LF = re.compile(r"(?<!\r)\n")


def _in_file_newlines(edits: list[Edit], source: SourceFile) -> list[Edit]:
    """Edits whose line breaks are the file's own: a rule writes "\n", a CRLF file keeps CRLF."""
    newline = source.newline
    if newline == "\n":
        return edits
    return [replace(e, content=_BARE_LF.sub(newline, e.content)) if "\n" in e.content else e for e in edits]


def apply_edits(text: str, edits: list[Edit]) -> str:
    out: list[str] = []
    cursor = 0
    for edit in edits:
        out.append(text[cursor : edit.start])
        out.append(edit.content)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)


def still_valid(before: SourceFile, after_text: str, filename: str) -> str | None:
    """Why ``after_text`` must not be written, or None when it is sound."""
    if before.is_python:
        try:
            cst.parse_module(after_text)
        except cst.ParserSyntaxError as exc:
            return f"the fixed source would not parse ({exc.message} at line {exc.raw_line})"
        if compiles(before.text) and not compiles(after_text):
            return "the fixed source would not compile"
    elif filename.endswith(".toml"):
        try:
            tomllib.loads(before.text)
        except tomllib.TOMLDecodeError:
            return None
        try:
            tomllib.loads(after_text)
        except tomllib.TOMLDecodeError as exc:
            return f"the fixed TOML would not load ({exc})"
    return None


def compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # CPython's SyntaxWarnings about the user's code are not ours to print
            compile(text, "<trllint>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_source(source: SourceFile, filename: str, ruleset: RuleSet, *, unsafe: bool) -> FixOutcome:
    current = source
    findings = lint_source(current, filename, ruleset)
    applied = 0
    problems: list[str] = []
    unsafe_applied: list[Finding] = []
    for _ in range(MAX_ROUNDS):
        fixes = [f.fix for f in findings if applicable(f.fix, unsafe)]
        if not fixes:
            break
        if not current.positions_reliable:
            problems.append("fixes were not applied: LibCST does not reproduce this file exactly; please report it")
            break
        taken, edits = choose_edits(fixes)  # type: ignore[arg-type]
        new_text = apply_edits(current.text, _in_file_newlines(edits, current))
        if new_text == current.text:
            break
        reason = still_valid(current, new_text, filename)
        if reason is not None:
            codes = sorted({f.code for f in findings if f.fix in taken})
            problems.append(f"fixes for {', '.join(codes)} were not applied: {reason}; please report it")
            break
        current = current.with_text(new_text)
        applied += len(taken)
        unsafe_applied += [f for f in findings if f.fix in taken and f.fix.applicability == "unsafe"]
        findings = lint_source(current, filename, ruleset)
    else:
        if any(applicable(f.fix, unsafe) for f in findings):
            problems.append(f"fixes did not settle after {MAX_ROUNDS} rounds; please report it")
    return FixOutcome(current.text, findings, applied, problems, unsafe_applied)


class WriteError(Exception):
    pass


def write_atomically(path: Path, data: bytes, *, expected_old: bytes) -> None:
    """Replace ``path``'s bytes with ``data`` all at once, keeping its permission bits.

    ``expected_old`` is what was read at the start: if the file changed or vanished since, it is
    left alone, since writing would lose someone else's edit.
    """
    target = Path(os.path.realpath(path))  # write through a symbolic link, keep the link
    try:
        st = target.stat()
    except FileNotFoundError:
        raise WriteError("the file vanished before it could be written; not written") from None
    except OSError as exc:
        raise WriteError(f"cannot stat the file ({exc.strerror}); not written") from None
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
        raise WriteError("the file is read-only; not written")
    try:
        with open(target, "rb") as handle:
            current = handle.read()
        if current == data:
            return  # another run (a second `trllint --fix`, say) already wrote exactly this
        if current != expected_old:
            raise WriteError("the file changed while it was being fixed; not written")
    except FileNotFoundError:
        raise WriteError("the file vanished before it could be written; not written") from None
    import tempfile  # only a run that writes needs it

    mode = stat.S_IMODE(st.st_mode)
    prefix = f".{target.name}.{os.getpid()}."
    try:
        fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=_TEMP_SUFFIX)
    except OSError as exc:
        raise WriteError(f"cannot create a temporary file beside it ({exc.strerror}); not written") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except OSError as exc:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        raise WriteError(f"cannot write ({exc.strerror}); not written") from None
    _remove_orphaned_temporaries(target)


_TEMP_SUFFIX = ".trllint-tmp"


def _remove_orphaned_temporaries(target: Path) -> None:
    """Delete what earlier runs, killed mid-write, left beside ``target``.

    A temporary file's name carries its writer's process id; it is an orphan when that process is
    gone. A live writer's file (a second run at work on the same tree) is never touched.
    """
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*{_TEMP_SUFFIX}"):
        pid = leftover.name[len(target.name) + 2 :].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _process_alive(int(pid)):
            continue
        try:
            leftover.unlink()
        except OSError:
            pass


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists but belongs to someone else
    return True
