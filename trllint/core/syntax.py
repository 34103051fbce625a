"""Whether a Python file is valid: TRL000 only for code no supported Python version accepts.

CPython's own parser is the fast path (about 30 times faster than LibCST's), but it knows only
the grammar of the interpreter running the linter: under 3.11 it rejects ``type X = int``
(PEP 695), type parameters and PEP 701 f-strings, which LibCST parses. So its failure is only a
suspicion, confirmed by LibCST's parser (which reads every grammar up to the newest it supports)
before a file is reported. CPython's message and position are kept when both fail: they are the
ones users know.

CPython's verdict also guards LibCST's native parser, which overflows the C stack (a
segmentation fault that ends the whole run) or runs for minutes on source nested past CPython's
limits. When CPython stopped early, on grammar it does not know, it never saw the nesting
further down: the tokens are counted instead (:func:`_nests_too_deeply`).
"""

from __future__ import annotations

import ast
import symtable
import warnings
from dataclasses import dataclass
from typing import cast

import libcst as cst

from trllint.core.findings import PARSE_ERROR, Finding, engine_finding
from trllint.core.source import SourceFile

# CPython's own limits on nesting, as its messages word them.
_DEPTH_ERRORS = ("too many nested parentheses", "too many levels of indentation", "too complex", "too many statically nested")
# CPython's tokenizer limits (MAXLEVEL, MAXINDENT); a run of prefix operators costs LibCST a
# native stack frame each, like a bracket.
_MAX_BRACKETS, _MAX_INDENT, _MAX_PREFIX_RUN = 200, 100, 200
_PREFIX_OPERATORS = frozenset({"-", "+", "~", "not", "await", "*", "**"})


@dataclass
class CPythonVerdict:
    too_deep: Finding | None = None  # TRL000 without asking LibCST: its parser would not survive
    error: Finding | None = None  # CPython's syntax error, to be confirmed by LibCST


def cpython_verdict(source: SourceFile, *, keep_tree: bool = True) -> CPythonVerdict:
    """CPython's parser on the file: nothing when it parses. ``keep_tree``: keep CPython's tree
    (trllint.core.positions places findings with its statement lines); without it the file is read
    by ``symtable``, which parses it as ``compile`` does but builds no Python object per node (a
    third less time), for a file that only needs the verdict."""
    if source.cpython_tree is not None:
        return CPythonVerdict()  # a prefilter's question about the project parsed it already
    tree = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours to print
            if keep_tree:
                # typeshed types this compile as AST; in "exec" mode it is always a Module
                tree = cast(
                    ast.Module,
                    compile(source.text, source.display_path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True),
                )
            else:
                # Its scope checks (`nonlocal` at module level) go beyond the grammar: such a file
                # is then a suspicion like any other, which LibCST's parse settles.
                symtable.symtable(source.text, source.display_path, "exec")
    except SyntaxError as exc:
        finding = engine_finding(
            PARSE_ERROR, source.display_path, f"syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1
        )
        if any(marker in (exc.msg or "") for marker in _DEPTH_ERRORS) or _nests_too_deeply(source.text):
            return CPythonVerdict(too_deep=finding, error=finding)
        return CPythonVerdict(error=finding)
    except (RecursionError, MemoryError):
        return CPythonVerdict(too_deep=_too_deep(source))
    except ValueError as exc:
        return CPythonVerdict(too_deep=engine_finding(PARSE_ERROR, source.display_path, f"cannot parse: {exc}"))
    if tree is not None:
        source.cpython_tree = tree  # statement lines, for trllint.core.positions
    return CPythonVerdict()


def cpython_tree(source: SourceFile) -> ast.Module | None:
    """CPython's tree of the file, parsed once (None when CPython rejects it)."""
    if source.cpython_tree is None:
        cpython_verdict(source)
    return source.cpython_tree


def libcst_error(source: SourceFile, verdict: CPythonVerdict) -> Finding | None:
    """The TRL000 for a file LibCST cannot parse (None when it parses: ``source.module`` is then
    the tree). Ask only after :func:`cpython_verdict` found the file not too deep."""
    try:
        source.module
    except cst.ParserSyntaxError as exc:
        if verdict.error is not None:
            return verdict.error  # CPython's line and wording are the ones users know
        return engine_finding(
            PARSE_ERROR, source.display_path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1
        )
    except RecursionError:
        return _too_deep(source)
    return None


def syntax_error(source: SourceFile) -> Finding | None:
    """The TRL000 for a Python file that no supported version accepts, or None.

    LibCST is asked only when CPython rejects the file, so a valid file costs CPython's parse alone.
    """
    verdict = cpython_verdict(source, keep_tree=False)
    if verdict.too_deep is not None:
        return verdict.too_deep
    if verdict.error is None:
        return None
    return libcst_error(source, verdict)


def _too_deep(source: SourceFile) -> Finding:
    return engine_finding(PARSE_ERROR, source.display_path, "source nests too deeply to parse")


def _nests_too_deeply(text: str) -> bool:
    """Whether the tokens nest past CPython's limits: brackets, indentation, prefix operators.

    Read with the running interpreter's tokenizer, which may not know newer grammar; where it
    gives up, every bracket counts, those in strings and comments too (too deep by mistake only
    costs a file that is reported TRL000 with CPython's own error, as before newer grammar was
    accepted).
    """
    import io
    import tokenize  # only for the rare file CPython rejects

    brackets = indent = run = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.INDENT:
                indent += 1
            elif token.type == tokenize.DEDENT:
                indent -= 1
            elif token.string in "([{" and token.type == tokenize.OP:
                brackets += 1
            elif token.string in ")]}" and token.type == tokenize.OP:
                brackets = max(0, brackets - 1)
            run = run + 1 if token.string in _PREFIX_OPERATORS else 0
            if brackets > _MAX_BRACKETS or indent > _MAX_INDENT or run > _MAX_PREFIX_RUN:
                return True
    except (tokenize.TokenError, SyntaxError):
        return _raw_bracket_depth(text) > _MAX_BRACKETS
    return False


def _raw_bracket_depth(text: str) -> int:
    deepest = depth = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth = max(0, depth - 1)
    return deepest
