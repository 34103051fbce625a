"""Where a node is in its file, worked out once per file and only for the nodes rules ask about.

LibCST's ``PositionProvider`` and ``WhitespaceInclusivePositionProvider`` each generate the code
of the whole module to place every node in it: on a 3,000-line trainer that is three times the
parse, spent on the handful of nodes a rule reports or fixes. Here a node is placed by generating
only the statement that holds it, from where that statement starts up to the end of the node:

- CPython's AST of the file (the runner's syntax check parses it anyway) gives the first line of
  every statement; the LibCST statement is matched to its AST statement through the blocks that
  hold it, statement by statement (a line of ``a; b`` is two AST statements);
- LibCST's own code generation, started on that line with the indentation of the enclosing
  blocks, records the same ranges as both providers (syntactic and whitespace-inclusive) for
  every node it passes, so later questions about nearby nodes cost nothing.

The generated text is compared with the file at that line. Where it differs (a form feed LibCST
drops, a statement the AST places elsewhere) or where no statement holds the node (the module,
its header comments), the whole module is generated once, both ranges in one pass, exactly as
LibCST's providers do. The answers are LibCST's ``CodeRange``: 1-based lines, 0-based columns.
"""

from __future__ import annotations

import ast
import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Optional

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from trllint.core.cst.private import CodegenState, generate_code
from trllint.core.source import SourceFile

_NEWLINE = re.compile(r"\r\n?|\n")  # LibCST's own line-break pattern for positions

Point = tuple[int, int]  # (1-based line, 0-based column)

# LibCST's two kinds of statement (every BaseStatement is one), both with leading_lines.
Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement
_STATEMENT_TYPES = (cst.SimpleStatementLine, cst.BaseCompoundStatement)

# The AST statements a LibCST compound statement can stand for.
_AST_KINDS: dict[type, tuple[type, ...]] = {
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
    cst.TryStar: (ast.TryStar,),
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.Match: (ast.Match,),
}
_AST_COMPOUND = tuple({kind for kinds in _AST_KINDS.values() for kind in kinds})
_AST_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class _Placed(Exception):
    """Raised by the code generation once the node asked about has been generated."""


@dataclass
class _PlacingState(CodegenState):
    """LibCST's code generation state that records both ranges of every node it generates.

    The same bookkeeping as LibCST's two position states, in one pass: a node's
    whitespace-inclusive range is the span of its ``_codegen``; its syntactic range is what it
    records with ``record_syntactic_position``, else the whitespace-inclusive one.
    """

    line: int = 1
    column: int = 0
    inclusive: dict[cst.CSTNode, tuple[Point, Point]] = field(default_factory=dict)
    syntactic: dict[cst.CSTNode, tuple[Point, Point]] = field(default_factory=dict)
    stop_after: Optional[cst.CSTNode] = None
    starts: list[Point] = field(default_factory=list)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        if node not in self.inclusive:  # LibCST keeps the first range of a node met twice
            self.inclusive[node] = (start, (self.line, self.column))
        if node is self.stop_after:
            raise _Placed

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> Iterator[None]:
        start = (self.line, self.column)
        yield  # not in a `finally`: a node left unfinished by an early stop has no range
        end = (self.line, self.column)
        if start_node is not None:
            start = self.syntactic_range(start_node)[0]
        if end_node is not None:
            end = self.syntactic_range(end_node)[1]
        self.syntactic[node] = (start, end)

    def syntactic_range(self, node: cst.CSTNode) -> tuple[Point, Point]:
        found = self.syntactic.get(node)
        return found if found is not None else self.inclusive[node]


class NodePositions:
    """The positions of one parsed file's nodes, placed on first question (see the module doc)."""

    def __init__(self, source: SourceFile, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> None:
        self._source = source
        self._module = source.module
        self._parents = parents
        self._inclusive: dict[cst.CSTNode, tuple[Point, Point]] = {}
        self._syntactic: dict[cst.CSTNode, tuple[Point, Point]] = {}
        self._whole_module_done = False
        self._tree: ast.Module | None | bool = False  # False: not parsed yet; None: no AST
        self._ast_indexes: dict[int, dict[int, int]] = {}  # id(block) -> id(statement) -> AST index

    def syntactic(self, node: cst.CSTNode) -> CodeRange:
        """``PositionProvider``'s range of ``node``; KeyError for a node not in the module."""
        self._place(node)
        found = self._syntactic.get(node)
        return _code_range(found if found is not None else self._inclusive[node])

    def whitespace_inclusive(self, node: cst.CSTNode) -> CodeRange:
        """``WhitespaceInclusivePositionProvider``'s range of ``node``."""
        self._place(node)
        return _code_range(self._inclusive[node])

    # ---- placing -------------------------------------------------------------------------

    def _place(self, node: cst.CSTNode) -> None:
        if node in self._inclusive or self._whole_module_done:
            return
        path = self._statements_holding(node)
        if path and self._generate_statement(path, node):
            return
        self._generate_module()

    def _statements_holding(self, node: cst.CSTNode) -> list[Statement] | None:
        """The statements of blocks that hold ``node``, outermost first (None: not in a statement)."""
        path: list[Statement] = []
        child, parent = node, self._parents.get(node)
        while parent is not None:
            if isinstance(parent, (cst.Module, cst.IndentedBlock)) and isinstance(child, _STATEMENT_TYPES):
                path.append(child)
            child, parent = parent, self._parents.get(parent)
        if child is not self._module or not path:
            return None
        path.reverse()
        return path

    def _generate_statement(self, path: list[Statement], node: cst.CSTNode) -> bool:
        """Generate the innermost statement of ``path`` up to the end of ``node``; False when it
        cannot be placed this way."""
        statement = path[-1]
        line = self._first_line(path)
        if line is None:
            return False
        module = self._module
        indents = [
            module.default_indent if block.indent is None else block.indent
            for block in (self._parents.get(s) for s in path[1:])
            if isinstance(block, cst.IndentedBlock)
        ]
        state = _PlacingState(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            indent_tokens=indents,
            line=line,
            stop_after=node,
        )
        try:
            generate_code(statement, state)
        except _Placed:
            pass
        if node not in state.inclusive or not self._matches_text(line, "".join(state.tokens)):
            return False
        for placed, span in state.inclusive.items():
            self._inclusive.setdefault(placed, span)
        self._syntactic.update(state.syntactic)
        return True

    def _matches_text(self, line: int, generated: str) -> bool:
        starts = self._source.line_starts
        if line - 1 >= len(starts):
            return False
        text = self._source.text
        start = starts[line - 1]
        if text.startswith(generated, start):
            return True
        # LibCST ends the last statement with a line break the file may not have.
        rest = text[start:]
        return generated.startswith(rest) and _NEWLINE.fullmatch(generated[len(rest) :]) is not None

    def _generate_module(self) -> None:
        module = self._module
        state = _PlacingState(default_indent=module.default_indent, default_newline=module.default_newline)
        generate_code(module, state)
        self._inclusive = state.inclusive
        self._syntactic = state.syntactic
        self._whole_module_done = True

    # ---- the statement's first line, from CPython's AST ---------------------------------

    def _first_line(self, path: list[Statement]) -> int | None:
        """The line where the innermost statement's code (its leading blank and comment lines
        included) starts, or None when the AST does not say."""
        tree = self._ast()
        if tree is None:
            return None
        body: list[ast.stmt] | None = tree.body
        block: cst.CSTNode = self._module
        found: ast.stmt | None = None
        for depth, statement in enumerate(path):
            if depth:
                parent = self._parents.get(statement)
                if parent is None:
                    return None
                body = _ast_body(path[depth - 1], found, parent)
                block = parent
            index = self._ast_index(block, statement)
            if body is None or index is None or index >= len(body):
                return None
            found = body[index]
            if not _same_kind(statement, found):
                return None
        if found is None:  # an empty path: no statement holds the node
            return None
        last = path[-1]
        line = found.lineno
        decorators = getattr(last, "decorators", ())
        if decorators:
            # _same_kind matched the decorated definition to its AST counterpart
            if not isinstance(found, _AST_DECORATED) or not found.decorator_list:
                return None
            line = found.decorator_list[0].lineno - len(decorators[0].leading_lines)
        return line - len(last.leading_lines)

    def _ast_index(self, block: cst.CSTNode, statement: Statement) -> int | None:
        indexes = self._ast_indexes.get(id(block))
        if indexes is None:
            indexes = self._ast_indexes[id(block)] = {}
            count = 0
            for member in getattr(block, "body", ()):
                indexes[id(member)] = count
                count += len(member.body) if isinstance(member, cst.SimpleStatementLine) else 1
        return indexes.get(id(statement))

    def _ast(self) -> ast.Module | None:
        if self._tree is False:
            tree = self._source.cpython_tree
            if not isinstance(tree, ast.Module):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        tree = ast.parse(self._source.text)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    tree = None
            self._tree = tree
        return self._tree  # type: ignore[return-value]


def _same_kind(statement: Statement, node: ast.stmt) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return bool(statement.body) and not isinstance(node, _AST_COMPOUND)
    return isinstance(node, _AST_KINDS.get(type(statement), ()))


def _ast_body(statement: Statement, node: Any, block: Any) -> list[ast.stmt] | None:
    """The AST statements of the block of ``statement`` (its AST being ``node``) that is ``block``."""
    for cst_block, body in _blocks(statement, node):
        if cst_block is block:
            return body
    return None


def _blocks(statement: Any, node: Any) -> Iterator[tuple[cst.CSTNode, list[ast.stmt]]]:
    """Each block of a compound statement beside the AST statements of the same block."""
    if isinstance(statement, cst.Match):
        for case, ast_case in zip(statement.cases, node.cases):
            yield case.body, ast_case.body
        return
    yield statement.body, node.body
    for handler, ast_handler in zip(getattr(statement, "handlers", ()), getattr(node, "handlers", ())):
        yield handler.body, ast_handler.body
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If):  # elif: an If in the orelse of both trees
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            yield from _blocks(orelse, node.orelse[0])
    elif orelse is not None:
        yield orelse.body, node.orelse
    finalbody = getattr(statement, "finalbody", None)
    if finalbody is not None:
        yield finalbody.body, node.finalbody


def _code_range(span: tuple[Point, Point]) -> CodeRange:
    (line, column), (end_line, end_column) = span
    return CodeRange(CodePosition(line, column), CodePosition(end_line, end_column))


def positions_of(source: SourceFile, parents: Callable[[], Mapping[cst.CSTNode, cst.CSTNode]]) -> NodePositions:
    """The file's positions, shared by every rule (``parents`` is asked once, on first use)."""
    if not isinstance(source.positions, NodePositions):
        source.positions = NodePositions(source, parents())
    return source.positions
