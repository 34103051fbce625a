"""TRL100's cases, one ``# noqa`` line each, as Ruff's RUF100 reads them: a code of a rule that is
on and reported nothing there (unused), of a known rule that is not on for the file (not selected,
or ignored for it: Ruff's "non-enabled"), and a code no rule has (unknown). Each is reported and
its safe fix removes the codes named; what the run cannot judge stays as it is."""

from __future__ import annotations

import pytest

from trllint.core.findings import Finding
from trllint.core.source import SourceFile
from trllint.core.suppression import noqa_directives, unused_noqa
from trllint.engine.fix_loop import apply_fix

KNOWN = frozenset({"TRL000", "TRL001", "TRL004", "TRL006", "TRL999"})
# The run selected TRL001 only (TRL004 and TRL006 are known rules it did not select).
ENABLED = frozenset({"TRL001"})

CASES = [
    # (the line, the message, or None when nothing is reported; the line after the fix)
    ("x = 1  # noqa: TRL001", "unused `noqa` code: nothing on this line is reported as TRL001", "x = 1"),
    ("x = 1  # noqa: TRL004", "unused `noqa` code: TRL004 is not enabled for this file", "x = 1"),
    ("x = 1  # noqa: trl004", "unused `noqa` code: TRL004 is not enabled for this file", "x = 1"),
    ("x = 1  # noqa: TRL004, TRL006", "unused `noqa` code: TRL004, TRL006 are not enabled for this file", "x = 1"),
    ("x = 1  # noqa: E501, TRL004", "unused `noqa` code: TRL004 is not enabled for this file", "x = 1  # noqa: E501"),
    ("x = 1  # noqa: TRL04", "unused `noqa` code: no rule has the code TRL04", "x = 1"),
    (
        "x = 1  # noqa: TRL001, TRL004, TRL04",
        "unused `noqa` code: nothing on this line is reported as TRL001; TRL004 is not enabled for this file; "
        "no rule has the code TRL04",
        "x = 1",
    ),
    # Not trllint's to judge, or no `# noqa` silences the code whatever the selection.
    ("x = 1  # noqa: E501", None, None),
    ("x = 1  # noqa", None, None),
    ("x = 1  # noqa: TRL000", None, None),
    ("x = 1  # noqa: TRL999", None, None),
    ("x = 1  # noqa: TRL100", None, None),
    # Text after the codes: reported, and what to keep is the author's call (no fix).
    ("x = 1  # noqa: TRL004 -- kept for the nightly run", "unused `noqa` code: TRL004 is not enabled for this file", "x = 1  # noqa: TRL004 -- kept for the nightly run"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "message", "fixed"), CASES)
def test_unused_noqa_case(line, message, fixed):
    source = SourceFile(line + "\n", "train.py")
    found = unused_noqa([], source, noqa_directives(source).lines, enabled=ENABLED, known=KNOWN)
    if message is None:
        assert found == []
        return
    [finding] = found
    assert (finding.code, finding.message) == ("TRL100", message)
    if fixed == line:
        assert finding.fix is None
    else:
        assert finding.fix is not None and finding.fix.applicability == "safe"
        assert apply_fix(source, finding.fix) == fixed + "\n"


def test_a_code_that_silences_a_finding_on_its_line_is_in_use():
    source = SourceFile("x = 1  # noqa: TRL001\n", "train.py")
    finding = Finding("TRL001", "x", "m", "train.py", line=1, column=1, end_line=1, end_column=2)
    assert unused_noqa([finding], source, noqa_directives(source).lines, enabled=ENABLED, known=KNOWN) == []
