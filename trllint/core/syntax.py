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

With a target version (trllint.core.target_version), syntax newer than the target is a TRL000
too, one that names the version (``newer``: the file still parses, and is still linted). When the
target is not newer than the running interpreter, CPython's verdict is final: what it rejects, the
target rejects as well. When it is newer, CPython's rejection is settled by LibCST as above, and
LibCST's tree is searched for syntax newer than the target (trllint.core.newer_syntax).
"""

from __future__ import annotations

import ast
import symtable
import sys
import warnings
from typing import TYPE_CHECKING, cast

import libcst as cst

from trllint.core.findings import PARSE_ERROR, Finding, engine_finding
from dataclasses import dataclass
from trllint.core.source import SourceFile

if TYPE_CHECKING:
    from trllint.core.newer_syntax import NewerSyntax
    from trllint.core.target_version import TargetVersion

# CPython's own limits on nesting, as its messages word them.
_DEPTH_ERRORS = ("too many nested parentheses", "too many levels of indentation", "too complex", "too many statically nested")
# CPython's tokenizer limits (MAXLEVEL, MAXINDENT); a run of prefix operators costs LibCST a
# native stack frame each, like a bracket.
_MAX_BRACKETS, _MAX_INDENT, _MAX_PREFIX_RUN = 200, 100, 200
_PREFIX_OPERATORS = frozenset({"-", "+", "~", "not", "await", "*", "**"})


RUNNING = (sys.version_info[0], sys.version_info[1])


@dataclass
class CPythonVerdict:
    too_deep: Finding | None = None  # TRL000 without asking LibCST: its parser would not survive
    error: Finding | None = None  # CPython's syntax error, to be confirmed by LibCST (unless final)
    # CPython's rejection stands without LibCST's word: the target is not newer than CPython.
    final: bool = False
    newer: Finding | None = None  # the file parses, but with syntax newer than the target
    target: TargetVersion | None = None


def cpython_verdict(
    source: SourceFile, *, keep_tree: bool = True, target: TargetVersion | None = None, find_newer: bool = True
) -> CPythonVerdict:
    """CPython's parser on the file: nothing when it parses. ``keep_tree``: keep CPython's tree
    (trllint.core.positions places findings with its statement lines); without it the file is read
    by ``symtable``, which parses it as ``compile`` does but builds no Python object per node (a
    third less time), for a file that only needs the verdict. ``target``: the version the file must
    run on (None: any version LibCST reads)."""
    find_newer = find_newer and _older(target)
    keep_tree = keep_tree or find_newer  # the newer-syntax search reads the tree
    verdict = _grammar_verdict(source, keep_tree=keep_tree)
    verdict.target = target
    if target is None or verdict.too_deep is not None:
        return verdict
    if verdict.error is not None:
        # Only the grammar's verdict is final: symtable's scope checks (``nonlocal`` at module
        # level) are not asked when the tree is kept, and a file must not be TRL000 or not
        # depending on which rules could match it.
        verdict.final = target.version <= RUNNING and (keep_tree or not _parses(source.text))
    elif find_newer:
        verdict.newer = _newer_than_older_target(source, target)
    return verdict


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<trllint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _older(target: TargetVersion | None) -> bool:
    return target is not None and target.version < RUNNING


def _newer_than_older_target(source: SourceFile, target: TargetVersion) -> Finding | None:
    """For a file this interpreter parsed: the syntax in it newer than an older target."""
    from trllint.core.newer_syntax import newer_in_ast  # only a target older than this Python

    tree = source.cpython_tree
    assert tree is not None  # kept: an older target asks for the tree
    newer = newer_in_ast(tree, source.text, target.version, RUNNING)
    if newer is not None:
        return newer_finding(source, newer, target)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source.text, source.display_path, feature_version=target.version)
    except SyntaxError as exc:
        # CPython's own words name the version ("... are only supported in Python 3.10 and greater").
        return engine_finding(
            PARSE_ERROR,
            source.display_path,
            f"syntax error: {exc.msg}; the target is Python {target} ({target.origin})",
            exc.lineno or 1,
            exc.offset or 1,
        )
    return None


def newer_finding(source: SourceFile, newer: NewerSyntax, target: TargetVersion) -> Finding:
    version = f"{newer.version[0]}.{newer.version[1]}"
    return engine_finding(
        PARSE_ERROR,
        source.display_path,
        f"syntax error: {newer.feature} needs Python {version} or newer; the target is Python {target} ({target.origin})",
        newer.line,
        newer.column,
    )


def _grammar_verdict(source: SourceFile, *, keep_tree: bool) -> CPythonVerdict:
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
    """The TRL000 for a file LibCST cannot parse, or that the target cannot (None when it parses:
    ``source.module`` is then the tree, and ``verdict.newer`` says whether it is newer than the
    target). Ask only after :func:`cpython_verdict` found the file not too deep."""
    try:
        module = source.module
    except cst.ParserSyntaxError as exc:
        if verdict.error is not None:
            return verdict.error  # CPython's line and wording are the ones users know
        return engine_finding(
            PARSE_ERROR, source.display_path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1
        )
    except RecursionError:
        return _too_deep(source)
    target = verdict.target
    if verdict.error is None or target is None:
        return None
    # CPython rejected what LibCST reads: grammar newer than CPython, or an error LibCST lets by.
    from trllint.core.newer_syntax import newer_in_cst

    newer = newer_in_cst(module, target.version)
    if newer is not None:
        # Linted like a file that a newer interpreter parsed (the same verdict on every Python).
        verdict.newer = newer_finding(source, newer, target)
        return None
    return verdict.error if verdict.final else None


def blocking_error(source: SourceFile, target: TargetVersion | None = None) -> Finding | None:
    """The TRL000 for source that cannot be linted at all (syntax newer than the target can)."""
    verdict = cpython_verdict(source, keep_tree=False, target=target, find_newer=False)
    if verdict.too_deep is not None:
        return verdict.too_deep
    if verdict.error is None:
        return None
    return libcst_error(source, verdict)


def syntax_error(source: SourceFile, target: TargetVersion | None = None) -> Finding | None:
    """The TRL000 for a Python file that the target (None: no supported version) does not accept,
    or None.

    LibCST is asked only when CPython rejects the file, so a valid file costs CPython's parse alone.
    """
    verdict = cpython_verdict(source, keep_tree=False, target=target)
    if verdict.too_deep is not None:
        return verdict.too_deep
    if verdict.error is None:
        return verdict.newer
    return libcst_error(source, verdict) or verdict.newer


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
