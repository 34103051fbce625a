"""A TRL006 hoist is safe only when every rank then enters the same sequence of collectives
a barrier that some ranks meet in another method of the class (a context manager
that staggers ranks between ``__enter__`` and ``__exit__``) makes the hoist unsafe."""

from __future__ import annotations

import textwrap

from trllint.core.source import SourceFile
from trllint.engine.lint import lint_source
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet

STAGGERED = textwrap.dedent(
    """\
    import torch.distributed as dist


    class staggered_creation:
        def __init__(self, local_rank, world_size):
            self.local_rank = local_rank
            self.world_size = world_size

        def __enter__(self):
            if self.world_size > 1 and self.local_rank % 2 == 0:
                dist.barrier()
            return self

        def __exit__(self, *args):
            if self.world_size > 1:
                if self.local_rank % 2 == 1:
                    dist.barrier()
                dist.barrier()
    """
)

SINGLE = textwrap.dedent(
    """\
    import torch.distributed as dist


    class Saver:
        def save(self, rank, write):
            if rank == 0:
                dist.barrier()
                write()
    """
)


def _fixes(text: str) -> dict[int, str | None]:
    ruleset = RuleSet([all_rules()["TRL006"].rule], {}, preview=True)
    findings = lint_source(SourceFile(text, "train.py"), "train.py", ruleset)
    return {f.line: f.fix.applicability if f.fix else None for f in findings if f.code == "TRL006"}


def test_a_barrier_staggered_across_enter_and_exit_is_never_hoisted_as_safe():
    # Whatever TRL006 reports here (the pairing across methods is not read yet), no hoist of
    # these barriers is safe: the even ranks would enter three barriers and the odd ranks two.
    assert "safe" not in _fixes(STAGGERED).values()


def test_the_only_barrier_of_a_class_keeps_its_safe_hoist():
    assert _fixes(SINGLE) == {7: "safe"}
