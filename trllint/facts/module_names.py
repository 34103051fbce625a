"""Which names a file shows to hold an ``nn.Module``: accelerate prepares optimizers, loaders and
schedulers as well as models, and only a model's wrapping changes what a read or a call does.

A name is shown a module when the file calls a method only a module has on it
(``.parameters()``, ``.requires_grad_()``), unwraps it (``accelerator.unwrap_model(network)``),
binds it from ``from_pretrained``, makes it another name for such a module (``self.model =
model``, either side) or builds it around one (``EMA(model)``, ``copy.deepcopy(model)``).
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from trllint.core.cst.names import argument, dotted_name
from trllint.semantic.model import SemanticModel

# Calls that only a module answers (an optimizer, a data loader or a scheduler, the other things
# accelerate prepares, has none of them): a name they are called on is a model. Not `train()` /
# `eval()`: schedule-free optimizers have them too.
_MODULE_ONLY_CALLS = frozenset({"parameters", "named_parameters", "requires_grad_", "modules", "named_modules"})
# What only an optimizer or a scheduler answers: a name read this way is none of the models.
_OPTIMIZER_MEMBERS = frozenset({"step", "param_groups", "get_last_lr"})


def shown_a_module(model: SemanticModel, receiver: str) -> bool:
    """The file shows ``receiver`` holds an ``nn.Module`` (the module docstring says how)."""
    return receiver in module_names(model)


def module_names(model: SemanticModel) -> frozenset[str]:
    """Every name (``model``, ``self.net``) the file shows holds an ``nn.Module``."""
    return model.once((shown_a_module,), lambda: _module_names(model))


def _module_names(model: SemanticModel) -> frozenset[str]:
    used: set[str] = set()  # a module method is called on it, or the code unwraps it
    loaded: set[str] = set()  # bound from `from_pretrained`: a model, or a tokenizer or processor
    optimizers: set[str] = set()
    for call in model.calls:
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
    aliases, built = _aliases_and_builds(model)
    # Built only around a module the code uses as one: a tokenizer from `from_pretrained` goes
    # into datasets and loaders, which are no modules.
    around = _closure(used, aliases)
    built_names = {name for name, source in built if source in around}
    return frozenset((_closure(used | loaded | built_names, aliases)) - optimizers - {""})


def _aliases_and_builds(model: SemanticModel) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The file's assignments of one name to another (``self.model = model``) and of a class built
    around a name (``EMA(model, beta=0.99)``, ``AveragedModel(model)``, ``copy.deepcopy(model)``):
    (bound name, name in the value) pairs, for names no other plain assignment binds."""
    aliases: list[tuple[str, str]] = []
    built: list[tuple[str, str]] = []
    bound = Counter(name for a in model.assignments for t in _targets(a) if (name := dotted_name(t)) is not None)
    for assignment in model.assignments:
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
