"""Where a logged tensor lives, as far as the fix needs to know: NCCL gathers CUDA tensors only.

``metrics["rewards"] = chosen_rewards.cpu().mean()`` gathered as it is crashes at the first
logged step on GPUs (gloo accepts a CPU tensor, so a CPU test passes). The fix gathers on the
device and moves to the CPU after: ``gather(chosen_rewards.mean()).mean().cpu()``.

- :func:`cpu_moves`: the ``.cpu()`` / ``.to("cpu")`` links of the value's own method chain (not
  inside an argument): the fix drops them inside the gather and moves the result after it;
- :func:`made_on_cpu`: the value comes from a tensor factory with no ``device`` (``torch.tensor
  (x)``, ``torch.zeros(n)``): a CPU tensor the fix cannot move without knowing the device, so the
  fix is unsafe, and says so.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst.names import argument, call_name

# torch factories that make a CPU tensor unless given a device.
_FACTORIES = frozenset(
    {"tensor", "as_tensor", "zeros", "ones", "full", "empty", "arange", "rand", "randn", "stack", "cat", "from_numpy"}
)
# Factories whose result lives where their inputs live (stack, cat): CPU only if an input is.
_FOLLOWS_INPUTS = frozenset({"stack", "cat"})


def _moves_to_cpu(call: cst.Call) -> bool:
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value == "cpu" and not call.args:
        return True
    if func.attr.value == "to" and call.args:
        target = call.args[0].value
        return isinstance(target, cst.SimpleString) and target.evaluated_value == "cpu"
    return False


def cpu_moves(expression: cst.BaseExpression) -> list[cst.Call]:
    """The calls in ``expression``'s method chain that move it to the CPU, outermost first."""
    moves: list[cst.Call] = []
    node: cst.BaseExpression = expression
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if _moves_to_cpu(node):
                moves.append(node)
            node = node.func.value
        elif isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        else:
            return moves


def converts_to_numpy(expression: cst.BaseExpression) -> bool:
    """``expression``'s method chain calls ``.numpy()``: what it reduces is a NumPy array, which
    no gather takes (``x.cpu().numpy().mean()``)."""
    node: cst.BaseExpression = expression
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value == "numpy" and not node.args:
                return True
            node = node.func.value
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        else:
            return False


def without_cpu_moves(expression: cst.BaseExpression) -> cst.BaseExpression:
    """``expression`` with its chain's CPU moves dropped (``x.cpu().mean()`` -> ``x.mean()``)."""
    moves = cpu_moves(expression)
    if not moves:
        return expression

    class Drop(cst.CSTTransformer):
        def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
            if any(original_node is move for move in moves):
                assert isinstance(updated_node.func, cst.Attribute)
                return updated_node.func.value
            return updated_node

    result = expression.visit(Drop())
    assert isinstance(result, cst.BaseExpression)
    return result


def made_on_cpu(expression: cst.BaseExpression) -> str | None:
    """The factory call (``torch.tensor``) the value's chain starts at when it makes a CPU
    tensor (no ``device=``), else None."""
    node: cst.BaseExpression = expression
    while True:
        if isinstance(node, cst.Call):
            name = call_name(node) or ""
            head, _, last = name.rpartition(".")
            if head in ("torch", "th") and last in _FACTORIES:
                if argument(node, "device") is not None or last in _FOLLOWS_INPUTS:
                    return None
                return name
            if isinstance(node.func, cst.Attribute):
                node = node.func.value
                continue
            return None
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
            continue
        return None
