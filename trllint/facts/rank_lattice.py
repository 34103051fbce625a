"""The rank lattice: what a value holds on each rank, and the names and calls that move it.

Under DDP, DeepSpeed or FSDP every rank runs the same code on its own slice of the batch. A value
computed from that slice (the batch, the model's outputs on it, the loss) is *per-rank*; once it
passes through ``gather``, ``gather_for_metrics``, ``reduce``, ``torch.distributed.all_reduce`` or
a Trainer's ``_nested_gather`` it is *global*, and so is everything derived only from global
values (``rewards = gather(rewards_per_func).sum(1)``). ``max`` joins two states.
"""

from __future__ import annotations

import enum
import re

import libcst as cst

from trllint.core.cst.names import ImportMap, argument, call_name, dotted_name, is_true, last_attribute, matches
from trllint.core.cst.walk import syntax_children
from trllint.facts.rank_reads import PLACEMENT_KEYWORDS, PLACEMENT_METHODS


class Rank(enum.IntEnum):
    """What a value holds, ordered so that ``max`` joins two of them."""

    NO_DATA = 0  # constants, config, counters, shapes: not this rank's data
    GLOBAL = 1  # gathered or reduced across ranks, or derived only from such values
    PER_RANK = 2  # computed from this rank's batch, model outputs or loss


# Calls whose result holds every rank's data (leading underscores stripped: Trainer._nested_gather).
GATHERING_CALLS = frozenset(
    {
        "gather",
        "gather_for_metrics",
        "reduce",
        "all_gather",
        "all_reduce",
        "nested_gather",
        "gather_object",
        "all_gather_object",
        "all_gather_into_tensor",
    }
)
# torch.distributed collectives that write their result into an argument: its keyword and position.
IN_PLACE_COLLECTIVES = {
    "all_reduce": ("tensor", 0),
    "reduce": ("tensor", 0),
    "broadcast": ("tensor", 0),  # every rank ends with the source rank's tensor
    "broadcast_object_list": ("object_list", 0),
    "all_gather": ("tensor_list", 0),
    "all_gather_into_tensor": ("output_tensor", 0),
    "all_gather_object": ("object_list", 0),
    "gather": ("gather_list", 1),
}
# accelerate's wrapper of torch's broadcast_object_list: it too fills the list in place.
ACCELERATE_IN_PLACE = ("accelerate.utils.broadcast_object_list", "accelerate.utils.operations.broadcast_object_list")
# Reads of shape or placement, not of data: the same kind of thing on every rank.
SHAPE_READS = frozenset({"size", "shape", "numel", "nelement", "dim", "ndim", "ndimension", "device", "dtype"})
NO_DATA_BUILTINS = frozenset({"len", "range", "isinstance", "hasattr", "type", "str", "repr", "print"})
# Parameter names that carry a batch or what the model made of it (compute_loss(model, inputs)).
DATA_PARAMETER_HINTS = (
    "batch", "input", "output", "logit", "logp", "loss", "label", "reward", "pred", "completion", "sample",
    "example", "target", "mask", "hidden", "embed",
)


# A parameter named like data but holding its position or size (`batch_idx`, `batch_size`,
# `sample_index`, `num_labels`), or a multiplier set by the configuration (`loss_scale`,
# `reward_coef`): a counter or a setting, not this rank's tensors.
_COUNTER_NAME = re.compile(r"(?:_idx|_index|_size|_step|_steps|_epoch|_len|_scale|_coef|_coeff)$|^(?:num|n)_")
# Annotations of Python scalars: a parameter typed `batch_idx: int` holds no tensor to gather.
_SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str"})


def named_like_data(param: cst.Param) -> bool:
    """A parameter that carries a batch or what the model made of it, by its name (``inputs``,
    ``chosen_logps``), unless its name or its annotation says it is a counter or a scalar."""
    name = param.name.value.lower()
    if not any(hint in name for hint in DATA_PARAMETER_HINTS) or _COUNTER_NAME.search(name):
        return False
    annotation = param.annotation.annotation if param.annotation is not None else None
    return dotted_name(annotation) not in _SCALAR_ANNOTATIONS if annotation is not None else True


def names_a_loader(name: str) -> bool:
    """A name of a data loader (``val_loader``, ``train_dataloader``), the last part of a dotted one."""
    return "loader" in name.rpartition(".")[2].lower()


# Clocks: a quantity divided by a duration they measure is a speed (tokens per second,
# samples per second). In synchronous data-parallel training every rank's step takes the same
# wall-clock time and a rate is a measurement of the process, meant per device: it describes
# no rank's slice of the data, and the mean over the ranks a gather would log barely moves it.
CLOCKS = frozenset(
    {"time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns", "time.monotonic_ns",
     "timeit.default_timer"}
)


# Parameters that hold a count every rank shares: transformers passes compute_loss the number of
# items in the whole step's batch, summed across ranks when tokens are averaged across devices.
GLOBAL_PARAMETERS = frozenset({"num_items_in_batch"})
# Libraries whose functions compute on their arguments without talking to other ranks (the
# collectives among them are matched by name first): their results are as per-rank as their inputs.
LOCAL_COMPUTE_LIBRARIES = frozenset(
    {"torch", "numpy", "math", "statistics", "einops", "scipy", "functools", "itertools", "operator", "collections",
     "transformers", "trl", "peft", "accelerate", "deepspeed"}
)

# Libraries whose metric objects sync their states across ranks in ``compute()`` (torchmetrics'
# ``Metric`` all-gathers each state and reduces it by its ``dist_reduce_fx`` before computing).
SYNCING_METRIC_LIBRARIES = frozenset({"torchmetrics"})
# Module methods that return the module itself (`m.to(device)` is `m`; a torchmetrics metric is a
# module too: `MeanMetric().to(device)`).
MODULE_RETURNS_ITSELF = frozenset(
    {"to", "cuda", "cpu", "float", "half", "bfloat16", "double", "type", "train", "eval", "requires_grad_", "apply"}
)


# Methods of TRL's trainers that return this rank's values, read from their source (trl 0.x-1.x):
# a subclass calling them gets per-rank tensors. Any other inherited method is unknown.
PER_RANK_LIBRARY_METHODS = frozenset(
    {
        "concatenated_forward", "compute_ref_log_probs", "compute_reference_log_probs", "dpo_loss", "kto_loss",
        "cpo_loss", "simpo_loss", "odds_ratio_loss", "get_batch_logps", "_get_per_token_logps",
        "_get_per_token_logps_and_entropies", "forward",
    }
)


# A function named for the value over every rank (`global_num_tokens_in_batch`), as
# `num_items_in_batch` names a parameter: its result is the same on every rank.
GLOBAL_PREFIX = "global_"
# Samplers that hand each rank its own shard of a data set: a loader built on one yields this
# rank's data, whatever its name.
SHARDING_SAMPLERS = frozenset({"DistributedSampler"})
# Fabric's (and Lightning Lite's) method that gives each loader such a sampler, unless told
# `use_distributed_sampler=False`.
FABRIC_SETUP_LOADERS = "setup_dataloaders"


def shards_the_data(call: cst.Call, method: str) -> bool:
    """``call`` (of ``method``) hands this rank its shard: a sharding sampler, or a Fabric's
    ``setup_dataloaders`` method (``fabric.setup_dataloaders``, a ``LightningLite`` subclass's
    ``self.setup_dataloaders``; not a function of that name) left to add one, as it does unless
    the code spells anything but ``use_distributed_sampler=True``."""
    if method in SHARDING_SAMPLERS:
        return True
    if method != FABRIC_SETUP_LOADERS or not isinstance(call.func, cst.Attribute):
        return False
    keeps = argument(call, "use_distributed_sampler")
    return keeps is None or is_true(keeps.value)


# torch's data loaders (and torchdata's resumable one): a sampler or the data set decides which
# examples each rank reads.
DATA_LOADERS = frozenset({"DataLoader", "StatefulDataLoader"})
# Where a loader call takes what decides the examples each rank reads: keyword and position.
LOADER_ARGUMENTS = {"dataset": 0, "shuffle": 2, "sampler": 3, "batch_sampler": 4}
# A loss function by its name (`dpo_loss`, `self._loss_fn`, `compute_loss`, `loss_func`): it
# reduces over the batch it is handed, never across ranks (a collective is matched by name first).
_LOSS_FUNCTION = re.compile(r"(?:^|_)(?:loss|criterion)(?:_?fn|_func|_function)?$")
# A model held by the trainer, called as a function: a forward pass over what it is handed.
_MODEL_ATTRIBUTE = re.compile(r"(?:^|_)(?:model|policy|actor|critic)$")


def is_loss_function(name: str) -> bool:
    """``name`` (a function or method name, leading underscores kept) names a loss function."""
    return bool(_LOSS_FUNCTION.search(name.lower().lstrip("_")))


def is_model_forward(call: cst.Call) -> bool:
    """``self.model(batch)``, ``self.ref_model(**inputs)``: a forward pass of a model the object
    holds, which computes on its arguments alone (a sharded model gathers weights, not data)."""
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and dotted_name(func.value) == "self"
        and bool(_MODEL_ATTRIBUTE.search(func.attr.value.lower()))
    )


def data_parts(call: cst.Call) -> list[cst.CSTNode]:
    """What a call's result is computed from: its arguments and its receiver. Where the result is
    placed is not what it holds (`model.cuda(local_rank)`, `DistributedDataParallel(model,
    device_ids=[local_rank])`: the same model on every rank)."""
    parts: list[cst.CSTNode] = [
        arg.value for arg in call.args if arg.keyword is None or arg.keyword.value not in PLACEMENT_KEYWORDS
    ]
    if isinstance(call.func, cst.Attribute):
        if call.func.attr.value in PLACEMENT_METHODS:
            parts = []
        parts.append(call.func.value)
    return parts


def is_own_function_call(call: cst.Call) -> bool:
    """``helper(x)`` or ``self.helper(x)``: a call that may land on a function of this file."""
    if isinstance(call.func, cst.Name):
        return True
    return isinstance(call.func, cst.Attribute) and dotted_name(call.func.value) in ("self", "cls")


# The modules of torch.distributed's collectives: deepspeed.comm offers the same API.
DISTRIBUTED_MODULES = ("torch.distributed.", "deepspeed.comm.")


def is_torch_distributed(name: str | None) -> bool:
    """A name of torch.distributed's API: ``torch.distributed.all_reduce``, its copy in
    ``deepspeed.comm``, or the usual alias ``dist.all_reduce``."""
    return name is not None and (name.startswith(DISTRIBUTED_MODULES) or name.split(".")[0] == "dist")


def in_place_output(call: cst.Call, imports: ImportMap) -> cst.Arg | None:
    """The argument a torch.distributed collective writes its result into (``t`` of
    ``dist.all_reduce(t)``, ``deepspeed.comm.all_reduce(t)``), or None when ``call`` is no such
    collective. Spelled through
    ``dist``, a project's re-export of torch.distributed (``from nanotron import distributed as
    dist``) counts too. Such a call returns no data: None, or a handle with ``async_op=True``."""
    spelled = call_name(call)
    full = imports.resolve(spelled) or spelled
    method = last_attribute(full)
    if matches(full, *ACCELERATE_IN_PLACE):
        return argument(call, "object_list", 0)
    if method not in IN_PLACE_COLLECTIVES or not (is_torch_distributed(full) or is_torch_distributed(spelled)):
        return None
    return argument(call, *IN_PLACE_COLLECTIVES[method])


def written_tensor(call: cst.Call, imports: ImportMap) -> cst.BaseExpression | None:
    """The tensor a torch.distributed collective writes into (``in_place_output``), seen through
    what hands over its own storage: ``t`` for ``dist.all_reduce(t)`` and for
    ``dist.all_reduce(t.detach())``, ``dist.all_reduce(t.data)`` or ``dist.all_reduce(t.div_(n))``
    (a view, or the tensor an in-place method returns). ``t.clone()`` is a copy: not ``t``."""
    output = in_place_output(call, imports)
    value = output.value if output is not None else None
    while value is not None:
        if isinstance(value, cst.Attribute) and value.attr.value == "data":
            value = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and _returns_its_storage(value.func.attr.value):
            value = value.func.value
        else:
            break
    return value


def _returns_its_storage(method: str) -> bool:
    # `detach()` is a view; an in-place method (`div_`, `mul_`) returns the tensor it changed.
    return method == "detach" or (method.endswith("_") and not method.startswith("_"))


def method_or_function(call: cst.Call) -> str | None:
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    if isinstance(call.func, cst.Name):
        return call.func.value
    return None


def names_in(node: cst.CSTNode) -> list[str]:
    """Every name and attribute name read in ``node`` (``a.b[c]`` -> ``a``, ``b``, ``c``)."""
    found: list[str] = []
    if isinstance(node, cst.Name):
        found.append(node.value)
    elif isinstance(node, cst.Attribute):
        found.append(node.attr.value)
    for child in syntax_children(node):
        found.extend(names_in(child))
    return found


def is_progress_bar(value: cst.BaseExpression) -> bool:
    """``tqdm(...)``, ``tqdm.auto.tqdm(...)``, ``trange(...)``: a bar over what it is handed."""
    return isinstance(value, cst.Call) and last_attribute(dotted_name(value.func)) in ("tqdm", "trange")
