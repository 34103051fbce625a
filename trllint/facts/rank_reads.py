"""What spells a rank read: the names, attributes, calls and environment variables that hold
this process's rank or test it, before the file's own names bound to them
(``trllint.facts.ranks.RankFacts`` follows those).
"""

from __future__ import annotations

import re

import libcst as cst

from trllint.core.cst.names import dotted_name
from trllint.core.cst.walk import syntax_children

# Attributes and methods that are true on one rank (or one per node) only.
RANK_PREDICATES = frozenset(
    {
        "is_main_process",  # accelerate's Accelerator / PartialState / AcceleratorState
        "is_local_main_process",
        "is_last_process",
        "is_world_process_zero",  # transformers' Trainer
        "is_local_process_zero",
        "is_rank_0",
        "is_rank_zero",
        "is_master",
        "is_master_process",
        "is_main_rank",
    }
)
# TrainingArguments' `args.should_save` and `args.should_log` are process_index == 0
# (local_process_index == 0 per node); the Trainer's `control.should_save` and
# `control.should_log` are flags every rank shares.
ARGUMENT_PREDICATES = frozenset({"should_save", "should_log"})
# Attributes and names that hold this process's rank (a different number on every rank).
RANK_INDEXES = frozenset(
    {
        "process_index",
        "local_process_index",
        "rank",
        "local_rank",
        "global_rank",
        "node_rank",
        "world_rank",
        "ddp_rank",
        "ddp_local_rank",
    }
)
# get_rank(), get_local_rank(), mpu.get_data_parallel_rank(): a rank, in the world or a group;
# a project's own spelling too (_get_rank(), safe_get_rank()). Not get_world_size_and_rank(),
# whose tuple holds the world size too (torchtune).
RANK_CALL = re.compile(r"(?:\w*_)?get_(?!\w*_and_)(?:\w+_)?rank$")
# os.environ["LOCAL_RANK"], os.getenv("RANK"): set per process by torchrun and accelerate launch.
_ENVIRONMENT_READS = frozenset({"environ", "getenv"})  # the names every read of one goes through
_RANK_VARIABLE = re.compile(r"(?:LOCAL_|GLOBAL_|NODE_|GROUP_)?RANK$")
# Decorators that run the function on some ranks only (accelerate, Lightning).
MAIN_ONLY_DECORATORS = frozenset(
    {"on_main_process", "on_local_main_process", "on_last_process", "on_process", "on_local_process", "rank_zero_only"}
)

# What a file must spell to test the rank at all: every rank fact above starts from one of these
# (a `get_*rank()` call and the RANK variables spell "rank"/"RANK"; a name bound to a rank test
# is bound from one). A prefilter part for rules that need a rank test in the file.
RANK_MARKERS = ("rank", "RANK", *sorted(RANK_PREDICATES | RANK_INDEXES | ARGUMENT_PREDICATES | MAIN_ONLY_DECORATORS))


def names_a_rank(name: str) -> bool:
    """Whether a name (or an attribute's name) is one every rank read or rank test of a file goes
    through, before the file's own names bound to them: a rank index (``local_rank``), a rank
    predicate (``is_main_process``, ``should_save``), a rank getter (``get_rank``), or the
    environment (``os.environ["RANK"]``)."""
    return (
        name in RANK_INDEXES or name in RANK_PREDICATES or name in ARGUMENT_PREDICATES or name in _ENVIRONMENT_READS
        or RANK_CALL.match(name) is not None
    )


# Where a value is placed is not what it is: `torch.load(path, map_location=device)`,
# `x.to(device)` and `DistributedDataParallel(model, device_ids=[local_rank])` are the same on
# every rank though each rank's device is its own (the rank flow reads placement so too).
PLACEMENT_KEYWORDS = frozenset({"map_location", "device", "device_map", "device_ids", "output_device"})
PLACEMENT_METHODS = frozenset({"to", "cuda"})


def read_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """What ``node`` reads: an attribute's object, not its attribute name (``config.rank`` reads
    ``config``; whether ``.rank`` is a rank is the whole attribute's question), and a call's
    arguments but not where it places its result."""
    if isinstance(node, cst.Attribute):
        return [node.value]
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in PLACEMENT_METHODS:
            return [node.func.value]
        placed = [a for a in node.args if a.keyword is not None and a.keyword.value in PLACEMENT_KEYWORDS]
        if placed:
            return [node.func, *(a.value for a in node.args if not any(a is p for p in placed))]
    return syntax_children(node)


def is_rank_variable_read(node: cst.CSTNode) -> bool:
    """``os.environ["LOCAL_RANK"]``, ``os.environ.get("RANK")``, ``os.getenv("LOCAL_RANK", 0)``."""
    return rank_variable(node) is not None


def rank_variable(node: cst.CSTNode) -> str | None:
    """``LOCAL_RANK`` for ``os.environ["LOCAL_RANK"]``, ``os.getenv("LOCAL_RANK", 0)``; None when
    ``node`` reads no rank variable of the environment."""
    key: cst.BaseExpression | None = None
    if isinstance(node, cst.Subscript) and dotted_name(node.value) in ("os.environ", "environ"):
        element = node.slice[0].slice if len(node.slice) == 1 else None
        key = element.value if isinstance(element, cst.Index) else None
    elif isinstance(node, cst.Call) and node.args:
        called = dotted_name(node.func)
        if called in ("os.environ.get", "environ.get", "os.getenv", "getenv"):
            key = node.args[0].value
    if isinstance(key, cst.SimpleString) and _RANK_VARIABLE.match(variable := str(key.evaluated_value)):
        return variable
    return None


def integer_constants(node: cst.BaseExpression) -> list[int] | None:
    """The integers of ``0``, ``-1``, ``(-1, 0)``, ``[0]`` or ``"0"`` (an environment variable is
    a string); None for anything else."""
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        values: list[int] = []
        for element in node.elements:
            inner = integer_constants(element.value)
            if inner is None or len(inner) != 1:
                return None
            values.extend(inner)
        return values
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = integer_constants(node.expression)
        return [-v for v in inner] if inner is not None and len(inner) == 1 else None
    if isinstance(node, cst.Integer):
        return [int(node.evaluated_value)]
    if isinstance(node, cst.SimpleString) and re.fullmatch(r"-?[0-9]+", str(node.evaluated_value)):
        return [int(node.evaluated_value)]
    return None

