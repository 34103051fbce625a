"""Which arguments of a call a metric sink logs: the calls of ``sinks.py`` read on LibCST's tree."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from trllint.core.cst.names import argument, call_name, is_none, is_true
from trllint.semantic.model import SemanticModel

from .metric_syntax import loose_name
from .sinks import (
    CALLBACK_SINK_METHOD,
    RECORD_METRIC_METHOD,
    DICT_SINK_METHODS,
    SCALAR_SINK_METHODS,
    SCALARS_SINK_METHOD,
    SELF_SINKS,
    LIGHTNING_MODULES,
    SYNC_KEYWORD,
    logs_with_log,
)

Logged = tuple[cst.BaseExpression, bool | None]  # (argument, holds a dict of metrics: yes/no/unknown)


def logged_arguments(call: cst.Call, configured: Iterable[str] = ()) -> list[Logged]:
    """The arguments of ``call`` that a metric sink logs, or [] when it is no sink; ``configured``:
    the callables the `metric-sinks` setting names."""
    name = loose_name(call.func)
    parts = name.split(".")
    receiver, method = (parts[-2] if len(parts) > 1 else ""), parts[-1]
    first, second = argument(call, "", 0), argument(call, "", 1)
    synced = argument(call, SYNC_KEYWORD)
    if synced is not None and is_true(synced.value):
        return []  # Lightning reduces it across ranks before it logs
    if name in SELF_SINKS or method in DICT_SINK_METHODS or logs_with_log(name):
        if first is not None and isinstance(first.value, cst.BaseString):
            # `self.log("acc", acc)`, `fabric.log("loss", loss)`: a name, then one value.
            return [(second.value, False)] if second is not None and method == "log" else []
        return [(first.value, True)] if first is not None else []
    if method == CALLBACK_SINK_METHOD and "callback_handler" in receiver:
        # Trainer.log hands its logs to the callbacks this way; a subclass may call it directly.
        logs = argument(call, "logs", 3)
        return [(logs.value, True)] if logs is not None else []
    if method == RECORD_METRIC_METHOD:
        # OLMo-core's `record_metric(name, value, reduce_type=...)` reduces across ranks unless
        # told `reduce_type=None`.
        reduce_type = argument(call, "reduce_type", 2)
        unreduced = reduce_type is not None and isinstance(reduce_type.value, cst.Name) and reduce_type.value.value == "None"
        value = argument(call, "value", 1)
        return [(value.value, False)] if unreduced and value is not None else []
    if method in SCALAR_SINK_METHODS:
        value = argument(call, "scalar_value" if method == "add_scalar" else "value", 1)
        return [(value.value, False)] if value is not None else []
    if method == SCALARS_SINK_METHOD:
        return [(second.value, True)] if second is not None else []
    for sink in configured:
        if name == sink or name.endswith("." + sink):
            return [(arg.value, None) for arg in call.args]
    return []


# Lightning Fabric's constructor and where its loggers go: `loggers=` (keyword-only in Lightning 2;
# the eighth positional argument of Lightning 1.9's Fabric).
_FABRIC = "Fabric"
_FABRIC_LOGGERS = ("loggers", 7)
# A Fabric's `loggers` is its own list: code may add one later (`fabric.loggers.append(logger)`).
_LIST_ADDS = ("append", "extend", "insert")


def fabrics_log_nothing(model: SemanticModel) -> bool:
    """Every Lightning Fabric the file builds is built without loggers (none given, or None) and
    the file adds none later, so its ``log`` and ``log_dict`` record nothing (lit-llama's
    pretraining scripts print instead). False when the file builds none: a Fabric handed in may
    have loggers. ``**`` or ``*`` arguments may hand some."""
    if not model.imports.imports_any(*LIGHTNING_MODULES):
        return False
    names = [(call_name(call) or "").split(".") for call in model.calls]
    if any(len(parts) > 1 and parts[-1] in _LIST_ADDS and parts[-2].lstrip("_") == "loggers" for parts in names):
        return False  # a logger added to a Fabric's list
    built = [call for call, parts in zip(model.calls, names) if parts[-1] == _FABRIC]
    return bool(built) and all(_without_loggers(call) for call in built)


def _without_loggers(call: cst.Call) -> bool:
    loggers = argument(call, *_FABRIC_LOGGERS)
    return (loggers is None or is_none(loggers.value)) and all(arg.star == "" for arg in call.args)


def is_fabric_receiver(call: cst.Call) -> bool:
    """A sink call on a Fabric by its name (``fabric.log_dict(...)``, ``self._fabric.log(...)``),
    as ``logs_with_log`` reads a receiver."""
    parts = loose_name(call.func).split(".")
    return len(parts) > 1 and "fabric" in parts[-2]
