"""TRL003 deepspeed-initialize-none: a model that may be None handed to deepspeed.initialize.

A whole-file check: the file's helpers that hand their argument on to deepspeed.initialize are
summarised (``forwarding.summarise_sinks``) before any call is judged, so a call of such a helper
is a call of a sink.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst import walk
from trllint.core.findings import ReasonKind
from trllint.rules.trl003_deepspeed_initialize_none.forwarding import (
    DEEPSPEED_SINKS,
    REACHES_A_SINK,
    FileSinks,
    Sink,
    summarise_sinks,
)
from trllint.facts.calls import calls_in
from trllint.facts.markers import DEEPSPEED_INITIALIZE
from trllint.semantic.model import SemanticModel
from trllint.core.cst.names import argument, assigned_names, assignment_targets, dotted_name
from trllint.facts.none_syntax import fails_on_none
from trllint.facts.nullness import nullness
from trllint.rule.base import AllOf, AnyOf, Calls, FindingKind, Fix, Rule, Setting
from trllint.semantic.project.file_view import project_view

DEEPSPEED_ERROR = "deepspeed.initialize requires a model"

# The sinks every file has (deepspeed.initialize, TRL's prepare_deepspeed) live beside the
# summaries that also need them.
BUILTIN_SINKS = DEEPSPEED_SINKS


class Unsafe(ReasonKind):
    """Why guarding the statement with `if model is not None:` may change what later code sees."""

    RETURNS_NONE = "the function then returns None when `{model}` is None"
    ITEM_ASSIGNMENT_SKIPPED = "the item assignment is skipped when `{model}` is None"
    NAME_LEFT_UNASSIGNED = "`{name}` is read later and stays unassigned when `{model}` is None"
    STATEMENT_SKIPPED = "the statement is skipped when `{model}` is None"


class DeepSpeedInitializeNone(Rule):
    code = "TRL003"
    name = "deepspeed-initialize-none"
    message = (
        "a model that may be None is handed to deepspeed.initialize, which asserts "
        f"'{DEEPSPEED_ERROR}'; guard the call with `if model is not None:`"
    )
    fixable = "sometimes"
    kinds = {"may-be-none": FindingKind("a model that is None on some path the code shows, handed to deepspeed.initialize")}
    # Every reason the nullness analysis knows spells one of the first part's tokens (a None
    # default, `Optional`/`| None`, `= None`, `.get(k)`, `getattr(o, a, None)`, `is None`).
    # Every built-in sink spells both of the others (a same-file helper calls one in the same
    # file); a configured sink alone can match, so its name satisfies every part. A file that
    # calls a helper of its project is let through when the module defining that helper (or a
    # base class's) spells a sink's call (`REACHES_A_SINK`), the only way a summary can make it
    # forward. Such
    # a file must still spell "deepspeed" somewhere (its config, its import, the helper's name):
    # asking every file's imports costs CPython's parse of each, so a caller that never names
    # DeepSpeed is not linted.
    # Last, the names: every finding is a call of a sink by its last name (a helper of this file
    # that forwards calls one in it), or of a project helper that `REACHES_A_SINK` finds.
    prefilter = AllOf(
        AnyOf("None", "Optional", "get"),
        AnyOf("deepspeed", setting="deepspeed-sinks"),
        AnyOf("prepare_deepspeed", DEEPSPEED_INITIALIZE, REACHES_A_SINK, setting="deepspeed-sinks"),
        AnyOf(
            Calls(*{sink.name.rsplit(".", 1)[-1] for sink in BUILTIN_SINKS}),
            REACHES_A_SINK,
            setting="deepspeed-sinks",
        ),
    )
    settings_schema = {
        "deepspeed-sinks": Setting(
            list,
            (),
            "more functions that hand their first argument (or `model=`) to deepspeed.initialize",
            item_kind=str,
        )
    }

    def check_module(self, model: SemanticModel) -> None:
        """Every call that hands a sink a model that may be None, judged once the file's sinks
        (its own helpers among them) are known."""
        self.context = model.context
        self.imports = model.imports
        self.nullness = nullness(model)
        sinks = self._file_sinks(model)
        for call in calls_in(model):
            self._check(call, sinks)

    def _file_sinks(self, model: SemanticModel) -> FileSinks:
        """deepspeed.initialize, TRL's prepare_deepspeed, the configured sinks, and the helpers of
        this file and of its project that hand their argument on to one of them unguarded."""
        configured = tuple(self.settings.get("deepspeed-sinks", ()))
        extra = [Sink(name, "model", 0, (f"{name}()",)) for name in configured]
        return model.once(
            (summarise_sinks, configured),
            lambda: summarise_sinks(model, [*BUILTIN_SINKS, *extra], project_view(model)),
        )

    def _check(self, node: cst.Call, sinks: FileSinks) -> None:
        """A sink handed a model that may be None, unless the call is one arm of a branch whose
        other arms all fail on None too."""
        for sink in sinks.matching(node, self.imports):
            arg = argument(node, sink.keyword, sink.position)
            model = dotted_name(arg.value) if arg is not None else None
            if model is None:
                continue
            reasons = self.nullness.none_reasons(model, node)
            if not reasons or self._fails_on_none_without_deepspeed(node, model):
                continue
            fix, caveat = self._guard(node, model)
            route = f", reached through {' -> '.join(sink.via)}," if sink.via else ""
            message = (
                f"`{model}` may be None here ({min(reasons)}); deepspeed.initialize{route} asserts "
                f"'{DEEPSPEED_ERROR}'; guard the call with `if {model} is not None:`{caveat}"
            )
            self.report(node, message, fix=fix, kind="may-be-none")
            return

    def _fails_on_none_without_deepspeed(self, call: cst.Call, model: str) -> bool:
        """The call is one arm of an if/elif/else whose every other arm also fails on a None
        ``model`` (``prepare_model(model)``, ``model.resize_token_embeddings(...)``): the value is
        required on every backend, and a None is the caller's mistake, not a DeepSpeed one."""
        statement = self.context.enclosing_statement(call)
        chain: list[cst.If] = []
        held_by: cst.CSTNode | None = None
        for ancestor in self.context.ancestors(statement):
            if isinstance(ancestor, cst.If):
                held_by = ancestor
                break
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return False
        if held_by is None:
            return False
        top = held_by
        while isinstance(parent := self.context.parent(top), cst.If) and parent.orelse is top:
            top = parent
        arms: list[cst.BaseSuite] = []
        branch: cst.If | cst.Else | None = top
        while isinstance(branch, cst.If):
            chain.append(branch)
            arms.append(branch.body)
            branch = branch.orelse
        if branch is None:
            return False  # no else: some backend skips the value altogether
        arms.append(branch.body)
        holding = next(arm for arm in arms if any(a is arm for a in self.context.ancestors(statement)))
        return all(_arm_fails_on_none(arm, model) for arm in arms if arm is not holding)

    # ---- the codemod: wrap the statement in `if model is not None:` ------------------------

    def _guard(self, call: cst.Call, model: str) -> tuple[Fix | None, str]:
        statement = self.context.enclosing_statement(call)
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None, ""  # a test, a `with` item, several statements on a line: no safe place
        parent = self.context.parent(statement)
        if not isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return None, ""
        why_unsafe = self._skipped_value_needed(statement.body[0], statement, model)
        guarded = cst.If(
            test=cst.parse_expression(f"{model} is not None"),
            body=cst.IndentedBlock(body=[statement.with_changes(leading_lines=[])]),
            leading_lines=statement.leading_lines,  # comments above stay above the guard
        )
        edit = self.replace_statement(statement, guarded)
        caveat = f" (unsafe fix: {why_unsafe})" if why_unsafe else ""
        return self.fix(edit, reason=why_unsafe), caveat

    def _skipped_value_needed(self, small: cst.BaseSmallStatement, line: cst.SimpleStatementLine, model: str) -> str | None:
        """Why skipping the statement when ``model`` is None changes what later code sees."""
        if isinstance(small, cst.Expr):
            return None
        if isinstance(small, cst.Return):
            return Unsafe.RETURNS_NONE.text(model=model)
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            targets = assignment_targets(small)
            names = [n for t in targets for n in assigned_names(t, unnamed="<subscript>")]
            for name in names:
                if name == "<subscript>":
                    return Unsafe.ITEM_ASSIGNMENT_SKIPPED.text(model=model)
                if name != model and not name.lstrip("*").startswith("_") and self._read_later(name, line):
                    return Unsafe.NAME_LEFT_UNASSIGNED.text(name=name, model=model)
            return None
        return Unsafe.STATEMENT_SKIPPED.text(model=model)

    def _read_later(self, name: str, line: cst.SimpleStatementLine) -> bool:
        """``name`` occurs after ``line`` in its function, or (for ``self.x``) in another method."""
        later: list[cst.CSTNode] = []
        child: cst.CSTNode = line
        for ancestor in self.context.ancestors(line):
            body = getattr(ancestor, "body", None)
            if isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and isinstance(body, (list, tuple)):
                later.extend(body[body.index(child) + 1 :])
            if isinstance(ancestor, cst.FunctionDef):
                break
            child = ancestor
        if name.startswith("self."):
            cls = self.context.enclosing_class(line)
            function = self.context.enclosing_function(line)
            if cls is not None and isinstance(cls.body, cst.IndentedBlock):
                later.extend(m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m is not function)
        return any(_mentions(node, name) for node in later)


def _arm_fails_on_none(arm: cst.BaseSuite, model: str) -> bool:
    """A statement of the arm fails on a None ``model`` before anything rebinds it."""
    statements = arm.body if isinstance(arm, cst.IndentedBlock) else [arm]
    for statement in statements:
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return False  # a nested branch (`if model is not None:`) may skip what fails
        for small in statement.body:
            if fails_on_none(small, model):
                return True
            if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and _mentions(small, model):
                return False  # rebound, or handed on: what follows may see another value
    return False


def _mentions(node: cst.CSTNode, name: str) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            nonlocal found
            found = found or n.value == name

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            nonlocal found
            found = found or dotted_name(n) == name
            return not found

    walk.visit(node, Finder())
    return found
