"""TRL005 known-bad-dependency: a dependency range that admits a release with a known distributed bug.

The releases are data (``known_bad.toml`` beside this file, read by ``releases.py``). Requirements
files, ``setup.cfg`` and ``pyproject.toml`` are read as text (:meth:`lint_text`); ``setup.py``
through its semantic model (:meth:`check_module`), where the requirements are the string
literals of ``install_requires`` and ``extras_require``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst.names import call_name
from trllint.core.requirements_files import named_as_requirements
from trllint.core.findings import Evidence, ReasonKind
from trllint.semantic.project.resolution import project_scope
from trllint.facts.calls import calls_in
from trllint.rule.base import Edit, FindingKind, Fix, Rule

# The readers of dependency lists (.dependencies, with tomllib) and of the project's launches are
# imported where a dependency is read: every run imports this module, and most lint no
# dependency list. packaging (.releases) only where a dependency is checked.
if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel

    from .dependencies import Declared, Unreadable
    from .releases import KnownBad


_SETUP_CALLS = ("setup", "setuptools.setup", "distutils.core.setup")
# setup() keywords whose strings are requirements.
_SETUP_KEYWORDS = ("install_requires", "extras_require")


class Unsafe(ReasonKind):
    """Why a rewritten range is unsafe."""

    # A resolver may now pick a release the author meant to keep out.
    DROPS_A_BOUND = "the new range drops a pin, an upper bound or an exclusion the old one had"


class KnownBadDependency(Rule):
    code = "TRL005"
    name = "known-bad-dependency"
    message = (
        "dependency range admits a release with a known distributed-training bug; "
        "raise its lower bound to the first good release"
    )
    fixable = "sometimes"
    kinds = {
        "known-bad-range": FindingKind("a range that admits a known-bad release, its need shown in the project"),
        "unreadable": FindingKind("unreadable files and malformed requirement lines", unproven=True),
        # Rows of known_bad.toml marked `preview = true` are not yet trusted as data.
        "preview-row": FindingKind("a range that admits a release of a known-bad row marked preview", unproven=True),
        "need-unknown": FindingKind("a known-bad range in a file of no project (standard input)", unproven=True),
    }
    # Any .txt / .in file handed over is read as pip's format: discovery hands over those named
    # like requirements files, those in a requirements/ folder, those they include with -r / -c,
    # and those the user names.
    file_patterns = ("pyproject.toml", "setup.cfg", "setup.py", "*.txt", "*.in")
    # The names a frozen environment (`pip freeze > requirements.txt`) pins, when the file is one.
    _frozen: frozenset[str] | None = None

    # ---- text files --------------------------------------------------------------------

    def lint_text(self) -> None:
        from .dependencies import Unreadable, frozen_environment, in_pyproject, in_requirements_file, in_setup_cfg

        text = self.source.text
        if self.filename == "pyproject.toml":
            items: Iterator[Declared | Unreadable] = in_pyproject(text)
        elif self.filename == "setup.cfg":
            items = in_setup_cfg(text)
        else:
            items = list(in_requirements_file(text))
            if not named_as_requirements(self.filename) and not _all_requirements(items):
                # Not named as a requirements file (included, in requirements/, or named by the
                # user): read as one only when every line is one, so a README.txt stays silent.
                return
            self._frozen = frozen_environment(items)
        for item in items:
            if isinstance(item, Unreadable):
                message = f"{self.filename}: {item.message}; its dependencies cannot be checked"
                self._report_span(item.start, item.start, message, kind="unreadable")
            else:
                self.check(item)

    def check(self, declared: Declared) -> None:
        from trllint.facts.launch.project import TRL_VLLM_GENERATION, trl_vllm_generation

        from .releases import InvalidRequirement, Requirement, version_part, violated_row

        try:
            requirement = Requirement(declared.text)
        except InvalidRequirement as exc:
            message = f"malformed requirement {declared.text!r}: {_first_line(exc)}; installers refuse it"
            self._report_span(declared.start, declared.end, message, kind="unreadable")
            return
        if requirement.url:  # a direct reference names one build, not a range
            return
        row = violated_row(requirement)
        if row is None:
            return
        evidence: tuple[Evidence, ...] = ()
        kind = "preview-row" if row.preview else "known-bad-range"
        # The package a row's need runs in: TRL's vLLM generation needs trl installed beside vllm.
        needed = "trl" if row.needs == TRL_VLLM_GENERATION else None
        if needed is not None and self._frozen is not None and needed not in self._frozen:
            # A frozen environment lists every package it had: without trl, the bug's need (TRL's
            # vLLM generation) cannot arise in it, whatever else the project runs (an inference
            # benchmark's `pip freeze` beside a GRPO trainer).
            return
        if row.needs == TRL_VLLM_GENERATION:
            if self.source.path is None:
                kind = "need-unknown"  # text with no project (standard input, a case)
            else:
                found = trl_vllm_generation(project_scope(self.source.path))
                if found is None:
                    return  # vLLM for inference only: the project never runs TRL's vLLM generation
                evidence = (found,)
        start, end = version_part(declared.text)
        written = declared.text[start:end].strip()
        spelled = f"{requirement.name}{written}" if written else f"{requirement.name} (no version bound)"
        message = (
            f"{spelled} admits {row.package}{row.bad}: {row.symptom}; "
            f"require {row.package}>={row.first_good} (see {row.reference})"
        )
        self._report_span(declared.start, declared.end, message, self._raise_fix(declared, row), evidence, kind)

    def _raise_fix(self, declared: Declared, row: KnownBad) -> Fix | None:
        from .releases import raise_lower_bound

        if declared.text_offset is None:
            return None
        edit = raise_lower_bound(declared.text, row.first_good)
        if edit is None:
            return None
        at = declared.text_offset
        reason = Unsafe.DROPS_A_BOUND.text() if edit.unsafe else None
        return self.fix(Edit(at + edit.start, at + edit.end, edit.content), reason=reason)

    def _report_span(
        self,
        start: int,
        end: int,
        message: str,
        fix: Fix | None = None,
        evidence: tuple[Evidence, ...] = (),
        kind: str = "known-bad-range",
    ) -> None:
        line, column = self.source.position(start)
        end_line, end_column = self.source.position(end)
        self.report_at(line, column, end_line, end_column, message, fix=fix, evidence=evidence, kind=kind)

    # ---- setup.py ----------------------------------------------------------------------

    def check_module(self, model: SemanticModel) -> None:
        """Each requirement string that ``setup(install_requires=..., extras_require=...)`` is
        given, written there or through a module-level name, checked once."""
        self.module_values = _module_level_values(model.source.module)
        checked: set[int] = set()
        for call in calls_in(model):
            if call_name(call) not in _SETUP_CALLS:
                continue
            for argument in call.args:
                if argument.keyword is not None and argument.keyword.value in _SETUP_KEYWORDS:
                    for literal in self._requirement_literals(argument.value, set()):
                        if id(literal) not in checked:
                            checked.add(id(literal))
                            self._check_literal(literal)

    def _requirement_literals(self, expression: cst.BaseExpression, seen: set[str]) -> Iterator[cst.SimpleString]:
        if isinstance(expression, cst.SimpleString):
            yield expression
        elif isinstance(expression, (cst.List, cst.Tuple, cst.Set)):
            for element in expression.elements:
                yield from self._requirement_literals(element.value, seen)
        elif isinstance(expression, cst.Dict):
            for element in expression.elements:
                yield from self._requirement_literals(element.value, seen)
        elif isinstance(expression, cst.BinaryOperation):  # REQUIRED + ["vllm>=0.7.2"]
            yield from self._requirement_literals(expression.left, seen)
            yield from self._requirement_literals(expression.right, seen)
        elif isinstance(expression, cst.Name) and expression.value not in seen:
            value = self.module_values.get(expression.value)
            if value is not None:
                yield from self._requirement_literals(value, seen | {expression.value})

    def _check_literal(self, literal: cst.SimpleString) -> None:
        from .dependencies import Declared

        if "b" in literal.prefix.lower():
            return
        position = self.get_metadata(PositionProvider, literal)
        start = self.source.text.find(literal.value, self.source.offset(position.start.line, position.start.column))
        end = start + len(literal.value)
        body_offset = start + len(literal.prefix) + len(literal.quote)
        value = literal.evaluated_value
        verbatim = self.source.text[body_offset : end - len(literal.quote)] == value
        self.check(Declared(value, start, end, body_offset if verbatim else None))


def _module_level_values(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """Module-level ``NAME = value``: what ``setup(install_requires=REQUIRED)`` may refer to."""
    values: dict[str, cst.BaseExpression] = {}
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name):
                    values[target.value] = small.value
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value:
                values[small.target.value] = small.value
    return values


def _all_requirements(items: list[Declared | Unreadable]) -> bool:
    from .releases import InvalidRequirement, Requirement

    try:
        for item in items:
            Requirement(item.text)  # type: ignore[union-attr]
    except InvalidRequirement:
        return False
    return bool(items)


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0]
