"""Which names a file shows to hold an ``nn.Module``: accelerate prepares optimizers, loaders and
schedulers as well as models, and only a model's wrapping changes what a read or a call does.

A name is shown a module when the file calls a method only a module has on it
(``.parameters()``, ``.requires_grad_()``), unwraps it (``accelerator.unwrap_model(network)``),
binds it from ``from_pretrained``, makes it another name for such a module (``self.model =
model``, either side) or builds it around one (``EMA(model)``, ``copy.deepcopy(model)``).

A ``self`` attribute is shown a module too when a base class in another module of the project
shows it so in its own methods (``SELF_MODULES``): trlx's ``AccelerateRLModel`` calls
``self.model.parameters()``, and its subclasses prepare that ``self.model``.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import libcst as cst

from trllint.core.cst.names import argument, dotted_name
from trllint.core.prefilter import AnyOf
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.file_view import project_view
from trllint.semantic.project.summaries import ModuleFact, top_level_classes

# Calls that only a module answers (an optimizer, a data loader or a scheduler, the other things
# accelerate prepares, has none of them): a name they are called on is a model. Not `train()` /
# `eval()`: schedule-free optimizers have them too.
_MODULE_ONLY_CALLS = frozenset({"parameters", "named_parameters", "requires_grad_", "modules", "named_modules"})
# What only an optimizer or a scheduler answers: a name read this way is none of the models.
_OPTIMIZER_MEMBERS = frozenset({"step", "param_groups", "get_last_lr"})
# What a base module must spell to show one of its class's attributes a module: one without
# any is not parsed for ``SELF_MODULES``.
SHOWS_A_MODULE = AnyOf(*_MODULE_ONLY_CALLS, "unwrap_model", "from_pretrained")


def shown_a_module(model: SemanticModel, receiver: str, at: cst.CSTNode | None = None) -> bool:
    """The file shows ``receiver`` holds an ``nn.Module`` (the module docstring says how); for a
    ``self`` attribute read ``at`` a node of a class, a base class of it in another module may show it."""
    if receiver in model.once((shown_a_module,), lambda: _module_names(model, model.calls, model.assignments)):
        return True
    if at is None or not (receiver.startswith("self.") and receiver.count(".") == 1):
        return False
    cls = model.context.enclosing_class(at)
    project = project_view(model) if cls is not None and cls.bases else None
    if cls is None or project is None:
        return False
    for base in project.base_classes(cls):
        answer = project.fact(base, SELF_MODULES, deep_if=SHOWS_A_MODULE)
        if answer is not None and receiver in answer.get(base.name, ()):
            return True
    return False


def _self_modules(model: SemanticModel) -> dict[str, list[str]]:
    """Class name -> the ``self`` attributes the class's own code shows hold an ``nn.Module``
    (its calls and assignments alone: another class of the module may hold something else
    under the name). A class that shows none is left out."""
    calls_of: dict[int, list[cst.Call]] = {}
    for call in model.calls:
        calls_of.setdefault(id(model.outermost_class_holding(call)), []).append(call)
    answer: dict[str, list[str]] = {}
    for cls in top_level_classes(model):
        names = _module_names(model, calls_of.get(id(cls), []), model.class_facts(cls).contents.assignments)
        shown = sorted(name for name in names if name.startswith("self.") and name.count(".") == 1)
        answer.pop(cls.name.value, None)  # a later class of the name wins, as Python binds it
        if shown:
            answer[cls.name.value] = shown
    return answer


# The ``self`` attributes a module's classes show hold a module: asked of a base class in another
# module. Read from the module alone.
SELF_MODULES = ModuleFact("module-names.self-modules", 1, _self_modules, reads_other_modules=False)


def _module_names(
    model: SemanticModel, calls: Iterable[cst.Call], assignments: Sequence[cst.Assign | cst.AnnAssign]
) -> frozenset[str]:
    """The names ``calls`` and ``assignments`` (the file's, or one class's) show hold a module."""
    used: set[str] = set()  # a module method is called on it, or the code unwraps it
    loaded: set[str] = set()  # bound from `from_pretrained`: a model, or a tokenizer or processor
    optimizers: set[str] = set()
    for call in calls:
        func = call.func
        if not isinstance(func, cst.Attribute):
            continue
        if func.attr.value in _OPTIMIZER_MEMBERS:
            optimizers.add(dotted_name(func.value) or "")
        elif func.attr.value in _MODULE_ONLY_CALLS:
            used.add(dotted_name(func.value) or "")
        elif func.attr.value == "unwrap_model":
            # `accelerator.unwrap_model(network)`: the code itself takes the model out of it.
            unwrapped = argument(call, "model", 0)
            used.add((dotted_name(unwrapped.value) if unwrapped is not None else None) or "")
        elif func.attr.value == "from_pretrained":
            parent = model.context.parent(call)
            while isinstance(parent, (cst.Attribute, cst.Call)):  # from_pretrained(...).to(device)
                parent = model.context.parent(parent)
            if isinstance(parent, cst.Assign):
                loaded.update(n for t in parent.targets if (n := dotted_name(t.target)) is not None)
    aliases, built = _aliases_and_builds(assignments)
    # Built only around a module the code uses as one: a tokenizer from `from_pretrained` goes
    # into datasets and loaders, which are no modules.
    around = _closure(used, aliases)
    built_names = {name for name, source in built if source in around}
    return frozenset((_closure(used | loaded | built_names, aliases)) - optimizers - {""})


def _aliases_and_builds(
    assignments: Sequence[cst.Assign | cst.AnnAssign],
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The assignments of one name to another (``self.model = model``) and of a class built
    around a name (``EMA(model, beta=0.99)``, ``AveragedModel(model)``, ``copy.deepcopy(model)``):
    (bound name, name in the value) pairs, for names no other plain assignment binds."""
    aliases: list[tuple[str, str]] = []
    built: list[tuple[str, str]] = []
    bound = Counter(name for a in assignments for t in _targets(a) if (name := dotted_name(t)) is not None)
    for assignment in assignments:
        value = assignment.value
        # A name bound more than once may hold another object elsewhere (`x = model`, later
        # `x = optimizer`): it links nothing.
        names = [name for t in _targets(assignment) if (name := dotted_name(t)) is not None and bound[name] == 1]
        source = dotted_name(value) if value is not None else None
        if source is not None:
            aliases.extend((name, source) for name in names)
        elif isinstance(value, cst.Call) and _builds_around(value) and value.args:
            first = value.args[0]
            around = dotted_name(first.value) if first.keyword is None and not first.star else None
            if around is not None:
                built.extend((name, around) for name in names)
    return aliases, built


def _targets(assignment: cst.Assign | cst.AnnAssign) -> list[cst.BaseExpression]:
    return [a.target for a in assignment.targets] if isinstance(assignment, cst.Assign) else [assignment.target]


def _closure(names: set[str], aliases: list[tuple[str, str]]) -> set[str]:
    """``names`` with every name an alias makes the same object as one of them (either side)."""
    found = set(names)
    changed = True
    while changed:
        changed = False
        for name, source in aliases:
            if (source in found) != (name in found):
                found.update((name, source))
                changed = True
    return found


def _builds_around(call: cst.Call) -> bool:
    """A class (a capitalised name) or ``deepcopy``, the shapes that build a module around a module."""
    name = dotted_name(call.func)
    last = name.rsplit(".", 1)[-1] if name else ""
    return last[:1].isupper() or last == "deepcopy"
