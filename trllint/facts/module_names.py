"""Which names a file shows to hold an ``nn.Module``: accelerate prepares optimizers, loaders and
schedulers as well as models, and only a model's wrapping changes what a read or a call does.

A name is shown a module when the file calls a method only a module has on it
(``.parameters()``, ``.requires_grad_()``), unwraps it (``accelerator.unwrap_model(network)``),
binds it from ``from_pretrained``, makes it another name for such a module (``self.model =
model``, either side) or builds it around one (``EMA(model)``, ``copy.deepcopy(model)``).
"""

from __future__ import annotations

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

    def compute() -> frozenset[str]:
        names: set[str] = set()
        optimizers: set[str] = set()
        for node in model.calls:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _OPTIMIZER_MEMBERS:
                optimizers.add(dotted_name(func.value) or "")
        for call in model.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_ONLY_CALLS:
                owner = dotted_name(func.value)
                if owner is not None:
                    names.add(owner)
            elif isinstance(func, cst.Attribute) and func.attr.value == "unwrap_model":
                # `accelerator.unwrap_model(network)`: the code itself takes the model out of it.
                unwrapped = argument(call, "model", 0)
                owner = dotted_name(unwrapped.value) if unwrapped is not None else None
                if owner is not None:
                    names.add(owner)
            elif isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained":
                parent = model.context.parent(call)
                while isinstance(parent, (cst.Attribute, cst.Call)):  # from_pretrained(...).to(device)
                    parent = model.context.parent(parent)
                if isinstance(parent, cst.Assign):
                    names.update(n for t in parent.targets if (n := dotted_name(t.target)) is not None)
        return frozenset(_same_or_built_around(model, names) - optimizers)

    return receiver in model.once((shown_a_module,), compute)


def _same_or_built_around(model: SemanticModel, modules: set[str]) -> set[str]:
    """``modules`` with every name an assignment of the file makes the same object as one of them
    (``self.model = model``: either side), or binds to a class built around one
    (``EMA(model, beta=0.99)``, ``AveragedModel(model)``, ``copy.deepcopy(model)``)."""
    pairs: list[tuple[str, str, bool]] = []  # (bound name, name in the value, the same object)
    for assignment in model.assignments:
        value = assignment.value
        source = dotted_name(value) if value is not None else None
        same = source is not None
        if isinstance(value, cst.Call) and _builds_around(value):
            first = value.args[0].value if value.args and value.args[0].keyword is None and not value.args[0].star else None
            source = dotted_name(first) if first is not None else None
        if source is None:
            continue
        targets = [a.target for a in assignment.targets] if isinstance(assignment, cst.Assign) else [assignment.target]
        pairs.extend((name, source, same) for t in targets if (name := dotted_name(t)) is not None)
    found = set(modules)
    changed = True
    while changed:
        changed = False
        for name, source, same in pairs:
            if source in found and name not in found:
                found.add(name)
                changed = True
            elif same and name in found and source not in found:
                found.add(source)
                changed = True
    return found


def _builds_around(call: cst.Call) -> bool:
    """A class (a capitalised name) or ``deepcopy``, the shapes that build a module around a module."""
    name = dotted_name(call.func)
    last = name.rsplit(".", 1)[-1] if name else ""
    return last[:1].isupper() or last == "deepcopy"
