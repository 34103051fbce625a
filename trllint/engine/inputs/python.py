"""Python source (``.py``, and ``.pyi`` stubs when named): decoded as the interpreter decodes it,
and a fix is written only when the result still parses (and still compiles, if it did)."""

from __future__ import annotations

import warnings

from trllint.core.source import SourceFile
from trllint.engine.inputs.text import TextKind


class PythonKind(TextKind):
    name = "python"
    is_python = True
    always_read = True

    def validate(self, before: SourceFile, after_text: str) -> str | None:
        import libcst as cst  # only a fix is checked: a file discovery asks the kind, a warm run no more

        try:
            cst.parse_module(after_text)
        except cst.ParserSyntaxError as exc:
            return f"the fixed source would not parse ({exc.message} at line {exc.raw_line})"
        if compiles(before.text) and not compiles(after_text):
            return "the fixed source would not compile"
        return None


class StubKind(PythonKind):
    # Stubs are read when named, and by a rule that asks for them; no walk or empty selection
    # reports one that does not parse.
    name = "python stub"
    always_read = False


def compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # CPython's SyntaxWarnings about the user's code are not ours to print
            compile(text, "<trllint>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


PYTHON = PythonKind()
STUB = StubKind()
