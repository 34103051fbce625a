"""Where TRL004's values go: the calls that log a metric, by the name they spell, TRL's metric
buffers, and the trainer methods whose returned dict is logged.

Written once for the rule, which reads them on LibCST's tree (``UngatheredMetric._logged_arguments``),
and for its prefilter, which asks CPython's tree before LibCST parses the file
(``logs_through_a_tracker``): a file that holds none of them gives the rule no value to check.
DeepSpeed's ZeRO optimizers spell ``self.timers.log(...)``, ``torch.log(x)`` and ``math.log(x)``
in 200 KB files and log no metric.
"""

from __future__ import annotations

import ast

from trllint.core.ast_walk import nodes

# TRL's per-step metric buffers; the rule adds the attributes a file hands to a sink.
METRIC_BUFFERS = ("self._metrics", "self._stored_metrics")

# TRL trainer methods whose returned metrics dict the trainer stores and logs (compute_loss ->
# store_metrics), so an override's dict reaches a sink without a call in the same file.
TRAINER_METRIC_HELPERS = ("get_batch_loss_metrics", "get_batch_metrics")

# Calls that log (or store for `log()`) a dict of metrics, by their whole loose name.
SELF_SINKS = frozenset({"self.log", "super.log", "self.store_metrics"})
# Methods that log a dict of metrics (their first argument), whatever their receiver.
DICT_SINK_METHODS = frozenset({"log_metrics", "log_dict"})
# Methods that log one value (a tracker's `add_scalar(tag, value)`, MLflow's `log_metric(key, value)`).
SCALAR_SINK_METHODS = frozenset({"add_scalar", "log_metric"})
SCALARS_SINK_METHOD = "add_scalars"  # (tag, a dict of values)
CALLBACK_SINK_METHOD = "on_log"  # Trainer.log hands its logs to the callbacks this way
# Every method a sink call ends in but `log`, whose receiver decides (``logs_with_log``).
SINK_METHODS = frozenset(
    {name.rsplit(".", 1)[-1] for name in SELF_SINKS} - {"log"}
    | DICT_SINK_METHODS | SCALAR_SINK_METHODS | {SCALARS_SINK_METHOD, CALLBACK_SINK_METHOD}
)


def logs_with_log(name: str) -> bool:
    """A call ``<name>(...)`` ending in ``.log`` (its loose name: calls and subscripts skipped) is a
    tracker's log, not ``math.log`` or ``self.timers.log``: ``self.log``, ``super().log``, or a
    receiver that is an accelerator, a tracker, ``wandb`` or a tracker's ``run``."""
    parts = name.split(".")
    if parts[-1] != "log":
        return False
    if name in SELF_SINKS:
        return True
    receiver = parts[-2] if len(parts) > 1 else ""
    return "accelerator" in receiver or "tracker" in receiver or receiver in ("wandb", "run")


def logs_through_a_tracker(tree: ast.Module) -> bool:
    """Some call of the file is ``logs_with_log`` (the prefilter's question of CPython's tree)."""
    for node in nodes(tree):
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "log":
            if logs_with_log(_loose_name(node.func)):
                return True
    return False


def _loose_name(node: ast.expr) -> str:
    """``metric_syntax.loose_name`` on CPython's tree: ``self.accelerator.trackers[0].log`` ->
    ``self.accelerator.trackers.log``, ``super().log`` -> ``super.log``."""
    if isinstance(node, ast.Attribute):
        inner = _loose_name(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    if isinstance(node, ast.Subscript):
        return _loose_name(node.value)
    if isinstance(node, ast.Call):
        return _loose_name(node.func)
    return node.id if isinstance(node, ast.Name) else ""
