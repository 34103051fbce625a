"""The walks of CPython's tree in trllint.core.ast_walk: the nodes ``ast.walk`` yields, without
the expression contexts, and in its order where a reader needs it."""

from __future__ import annotations

import ast
import textwrap

from trllint.core.ast_walk import in_walk_order, nodes, parents

SOURCE = textwrap.dedent(
    """
    import torch.distributed as dist
    from accelerate import Accelerator, DeepSpeedPlugin


    @torch.no_grad()
    def evaluate(model, loader, *, accelerator: Accelerator | None = None):
        total = 0
        for step, (batch, labels) in enumerate(loader):
            with accelerator.autocast():
                out = model(**batch)
            total += (out.logits.argmax(-1) == labels).sum().item()
        gathered = [t async for t in stream] if False else {k: v for k, v in batch.items()}
        match total:
            case 0 | None:
                return lambda x=1: f"{x!r:>{total}}"
        try:
            dist.all_reduce(total)
        except* RuntimeError as error:
            raise ValueError(error) from None
        return accelerator.gather(total)[0:2, ...]


    plugin = DeepSpeedPlugin(zero_stage=3)
    """
)


def _walked(tree: ast.AST) -> list[ast.AST]:
    return [node for node in ast.walk(tree) if not isinstance(node, ast.expr_context)]


def test_in_walk_order_yields_what_ast_walk_yields_in_its_order():
    tree = ast.parse(SOURCE)
    assert list(in_walk_order(tree)) == _walked(tree)
    inner = tree.body[2]  # a subtree: the function and what it holds
    assert list(in_walk_order(inner)) == _walked(inner)


def test_nodes_and_parents_cover_every_node_below_the_tree():
    tree = ast.parse(SOURCE)
    below = _walked(tree)[1:]
    assert sorted(map(id, nodes(tree))) == sorted(map(id, below))
    parent_of = parents(tree)
    assert set(map(id, parent_of)) == set(map(id, below))
    for node in below:
        assert any(child is node for child in ast.iter_child_nodes(parent_of[node]))
