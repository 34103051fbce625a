"""The line a TRL006 finding shows as where the ranks part, when it is not the guard's own."""

from __future__ import annotations

from typing import Callable

import libcst as cst

from trllint.core.findings import Evidence
from trllint.core.source import SourceFile
from trllint.facts.rank_split import RankSplit

from .guard_syntax import code_of


def split_evidence(
    source: SourceFile, line_of: Callable[[cst.CSTNode], int], split: RankSplit | None, guard_line: int
) -> list[Evidence]:
    """The assignment that bound a rank test the guard reads by name, or the function that takes
    this rank's own data it tests; nothing where that is the guard's own line."""
    if split is None:
        return []
    origin = split.origin
    line = line_of(origin)
    if line == guard_line:
        return []
    if isinstance(origin, cst.FunctionDef):
        said = f"the ranks part here: `{origin.name.value}` takes this rank's own data"
    else:
        # A loop or a `with` binds the name in its header: show that, not its body.
        if isinstance(origin, cst.For):
            code = f"for {code_of(source, origin.target)} in {code_of(source, origin.iter)}"
        elif isinstance(origin, cst.With):
            code = code_of(source, origin.with_changes(body=cst.IndentedBlock([])))
        else:
            code = code_of(source, origin)
        code = code if len(code) <= 60 else code[:57] + "..."
        said = f"the ranks part here: `{code}` {split.kind.value}"
    return [Evidence(source.display_path, line, said)]
