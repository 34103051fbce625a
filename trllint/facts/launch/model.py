"""The launch model: how the code at a node may run, with the evidence, asked by every rule.

The answer for an entry point (a script, a notebook, a function ``notebook_launcher`` starts)
is a :class:`Launch`: the facts that say which backends it may run under, and whether they are
all there is (``closed``). A backend is

- *shown* when a fact allows only backends of the asked set (a launch script with a ZeRO-3
  config shows ZeRO-3): a backend-dependent finding is made, with that evidence;
- *ruled out* when the facts are closed and none allows it (a project whose only launch is a
  ``MULTI_GPU`` config never runs ZeRO-3): the finding is not made;
- *unknown* otherwise: a backend-dependent finding is not made in the default selection (it may
  be a preview behaviour that names the backends).

Where the facts come from:

- a file that launch commands name: those commands (and the configs they name), closed;
- any other file of a project: every multi-process command and every config of the project
  (the file may be a module the launched programs import), closed when there is one; for a
  script, they show only several processes (no command says how it is started);
- a notebook: one process (closed), except in a function ``notebook_launcher`` starts (and the
  notebook functions it calls), which run in its processes;
- always, the file's own code: the launches it builds or handles, and those it cannot run under
  (``code.py``: two models in one ``accelerator.prepare`` rule DeepSpeed out, whatever config the
  project ships); a fact left with no backend is dropped;
- at a node, the tests on every path to it, by what they say when true: where they rule
  backends out (the body of ``if self.is_fsdp_enabled or self.is_deepspeed_enabled:``, the code
  after ``if not args.use_fsdp: return``; ``backend_tests.py``), those are ruled out there.

Nothing is imported or run: configs, scripts and code are read as text.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from trllint.core.cst import walk
from trllint.core.findings import Evidence
from trllint.core.positions import positions_of
from trllint.facts.launch import LAUNCH_SOURCES
from trllint.facts.launch.backends import ANY, MULTI_PROCESS, Backend, LaunchFact, describe
from trllint.facts.launch.backend_tests import backends_possible_at
from trllint.facts.launch.code import CodeLaunch, code_launch

if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel

NOTEBOOK_SUFFIX = ".ipynb"


@dataclass(frozen=True)
class Launch:
    facts: tuple[LaunchFact, ...]
    closed: bool  # the facts are every way the code runs: a backend none allows is ruled out
    excluded: frozenset[Backend] = frozenset()  # backends the code itself cannot run under

    def possible(self, backends: frozenset[Backend]) -> bool:
        """The code may run under one of ``backends`` (unknown counts as possible)."""
        backends = backends - self.excluded
        return bool(backends) and (not self.closed or any(fact.backends & backends for fact in self.facts))

    def shown(self, backends: frozenset[Backend]) -> tuple[Evidence, ...]:
        """The evidence that the code runs under one of ``backends``: the facts that allow
        nothing else. Empty when none shows it."""
        evidence: list[Evidence] = []
        for fact in self.facts:
            if (fact.backends if fact.shows is None else fact.shows) <= backends:
                evidence.extend(e for e in fact.evidence if e not in evidence)
        return tuple(evidence)

    def only(self, backends: frozenset[Backend]) -> bool:
        """Every fact allows only ``backends`` (and there is one): nothing else runs this code."""
        return self.closed and bool(self.facts) and all(fact.backends <= backends for fact in self.facts)

    @property
    def multi_process(self) -> bool:
        """The code may run in several processes."""
        return self.possible(MULTI_PROCESS)

    def within(self, backends: frozenset[Backend]) -> Launch:
        """The launch of code that runs only under ``backends``: the others are ruled out, and a
        fact that allows none of them is no launch of it; where none is left, how the code runs
        is unknown (the program has a switch for a backend no launch file shows). What the facts
        show is unchanged (the code naming a backend does not show that any launch uses it)."""
        excluded = self.excluded | (ANY - backends)
        kept = tuple(fact for fact in self.facts if fact.backends - excluded)
        return Launch(kept, self.closed and bool(kept), excluded)

    def unknown_message(self, backends: frozenset[Backend]) -> str:
        """How a preview finding says on which launch it depends."""
        return f"no launch config or script of the project says whether it runs under {describe(backends)}"


def launch_of(model: SemanticModel, node: cst.CSTNode | None = None) -> Launch:
    """How the code at ``node`` (else the file's top level) may run: the file's launch, within
    the backends the tests on every path to it leave by their truth (``if self.is_deepspeed_enabled:``)."""
    source = model.source
    code = model.once((code_launch,), lambda: _code_of(model))
    if source.display_path.endswith(NOTEBOOK_SUFFIX):
        launch = _notebook_launch(model, code, node)
    else:
        launch = model.once((launch_of,), lambda: _file_launch(model, code))
    # Only what a test says when true narrows the launch: the other arm is where code handles
    # the backends the project may not launch (an else of `if self.is_deepspeed_enabled:` in a
    # DeepSpeed-only project would leave no launch, and how it runs unknown).
    possible = backends_possible_at(model, node, by_falsehood=False) if node is not None else ANY
    return launch if possible == ANY else launch.within(possible)


def launch_dependencies(model: SemanticModel) -> dict[str, str]:
    """The project launch files a file's answers read, as one entry for the result cache:
    ``launch-sources:<root>`` -> the digest of every launch file of the project."""
    root = model.cached((_project_root,))
    if root is None:
        return {}
    from trllint.facts.launch.project import project_launch

    return {f"{LAUNCH_SOURCES}{root}": project_launch(root).digest}


def _code_of(model: SemanticModel) -> CodeLaunch:
    positions = positions_of(model.source, lambda: model.parents)
    return code_launch(model.source.module, lambda node: positions.syntactic(node).start.line)


def _code_facts(model: SemanticModel, code: CodeLaunch) -> list[LaunchFact]:
    path = model.source.display_path
    return [
        LaunchFact(backends, tuple(Evidence(path, line, said) for line, said in lines))
        for backends, lines in code.facts.items()
    ]


def _project_root(model: SemanticModel) -> Path:
    from trllint.semantic.project.resolution import project_scope

    assert model.source.path is not None
    return project_scope(model.source.path)


def _excluding(facts: tuple[LaunchFact, ...], code: CodeLaunch, closed: bool) -> Launch:
    """The launch, less the backends the code cannot run under: a config that allows only those
    is no launch of this code."""
    excluded = frozenset().union(*code.excluded)
    if not excluded:
        return Launch(facts, closed)
    kept = tuple(replace(f, backends=f.backends - excluded) for f in facts if f.backends - excluded)
    return Launch(kept, closed, excluded)


def _file_launch(model: SemanticModel, code: CodeLaunch) -> Launch:
    own = _code_facts(model, code)
    path = model.source.path
    if path is None:  # standard input, a case held in memory: only the code speaks
        return _excluding(tuple(own), code, closed=False)
    from trllint.facts.launch.project import project_launch, project_programs

    root = model.once((_project_root,), lambda: _project_root(model))
    project = project_launch(root)
    named = project.commands_for(path)
    if named:
        return _excluding((*named, *own), code, closed=True)
    shared = [fact for fact in project.commands if fact.backends != frozenset({Backend.ONE_PROCESS})]
    shared += project.configs
    if _is_a_program(model.source.module):
        # A script no command names is started in a way the project does not show. Other
        # programs' launches and the project's configs bound what it may run under, as for a
        # module those programs import; they show only that the project runs on several
        # processes. Where it is the project's one program, its configs are its own.
        only_program = any(fact.entry is None for fact in shared) and project_programs(root) == (path.resolve(),)
        shared = [fact if only_program and fact.entry is None else replace(fact, shows=fact.backends | MULTI_PROCESS) for fact in shared]
    return _excluding((*shared, *own), code, closed=bool(shared))


def _is_a_program(module: cst.Module) -> bool:
    """The file runs as a program of its own: a top-level ``if __name__ == "__main__":``."""
    for statement in module.body:
        test = statement.test if isinstance(statement, cst.If) else None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            sides = (test.left, test.comparisons[0].comparator)
            names = {side.value for side in sides if isinstance(side, cst.Name)}
            strings = {side.evaluated_value for side in sides if isinstance(side, cst.SimpleString)}
            if names == {"__name__"} and strings == {"__main__"}:
                return True
    return False


def _notebook_launch(model: SemanticModel, code: CodeLaunch, node: cst.CSTNode | None) -> Launch:
    own = _code_facts(model, code)
    path = model.source.display_path
    launched = model.once((_notebook_launch,), lambda: _launched_functions(model, code))
    # The function, or the class of the method, that holds the node and a launcher starts.
    starter = next(
        (
            ancestor.name.value
            for ancestor in (model.context.ancestors(node) if node is not None else ())
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)) and ancestor.name.value in launched
        ),
        None,
    )
    if starter is None:
        one = Evidence(path, 1, "a notebook runs in one process: no notebook_launcher starts this code")
        return Launch((LaunchFact(frozenset({Backend.ONE_PROCESS}), (one,)),), closed=True)
    processes, line = launched[starter]
    if processes == 1:
        backends = frozenset({Backend.ONE_PROCESS})
    else:
        backends = frozenset().union(*(f.backends for f in own)) & MULTI_PROCESS or frozenset({Backend.DDP})
    started = Evidence(path, line, f"notebook_launcher starts {starter} in {processes or 'one per GPU'} processes")
    return _excluding((LaunchFact(backends, (started,)), *own), code, closed=True)


def _launched_functions(model: SemanticModel, code: CodeLaunch) -> dict[str, tuple[int | None, int]]:
    """The notebook's functions that ``notebook_launcher`` starts, those they call by name, and
    the classes they make (whose methods then run in the launcher's processes). Read from
    LibCST's tree: a notebook may use syntax newer than the interpreter running trllint."""
    if not code.launched:
        return {}
    body = model.source.module.body
    definitions = {s.name.value: s for s in body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    launched = dict(code.launched)
    pending = list(launched)
    while pending:
        name = pending.pop()
        definition = definitions.get(name)
        if definition is None:
            continue
        for called in _names_called(definition):
            if called in definitions and called not in launched:
                launched[called] = launched[name]
                pending.append(called)
    return launched


def _names_called(node: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Name):
                names.add(call.func.value)

    walk.visit(node, Calls())
    return names


__all__ = ["ANY", "Launch", "launch_dependencies", "launch_of"]
