"""Where TRL004's values go: the calls that log a metric, by the name they spell, TRL's metric
buffers, and the trainer methods whose returned dict is logged.

Written once for the rule, which reads them on LibCST's tree (``UngatheredMetric._logged_arguments``),
and for its prefilter, which asks that the file spell one of their names: a file that spells none
gives the rule no value to check.
"""

from __future__ import annotations

import re

from trllint.core.prefilter import Token

# TRL's per-step metric buffers; the rule adds the attributes a file hands to a sink.
METRIC_BUFFERS = ("self._metrics", "self._stored_metrics")

# TRL trainer methods whose returned metrics dict the trainer stores and logs (compute_loss ->
# store_metrics), so an override's dict reaches a sink without a call in the same file.
TRAINER_METRIC_HELPERS = ("get_batch_loss_metrics", "get_batch_metrics")

# The Trainer's `compute_metrics`: the user's function of the predictions it is handed (the
# Trainer's own evaluation hands it gathered ones); it reduces nothing across ranks itself.
TRAINER_METRIC_FUNCTION = "compute_metrics"

# Calls that log (or store for `log()`) a dict of metrics, by their whole loose name.
SELF_SINKS = frozenset({"self.log", "super.log", "self.store_metrics"})
# Methods that log a dict of metrics (their first argument), whatever their receiver.
DICT_SINK_METHODS = frozenset({"log_metrics", "log_dict"})
# Methods that log one value (a tracker's `add_scalar(tag, value)`, MLflow's `log_metric(key, value)`).
SCALAR_SINK_METHODS = frozenset({"add_scalar", "log_metric"})
# A trainer's one-value sink that reduces across ranks unless told not to (`reduce_type=None`).
RECORD_METRIC_METHOD = "record_metric"
# Receivers whose `.log(...)` logs metrics: an accelerator's or a tracker's, wandb's, a run's,
# Lightning Fabric's (`fabric.log(name, value)`), a metric logger's.
LOGGING_RECEIVERS = ("accelerator", "tracker", "fabric", "metric_logger")
SCALARS_SINK_METHOD = "add_scalars"  # (tag, a dict of values)
CALLBACK_SINK_METHOD = "on_log"  # Trainer.log hands its logs to the callbacks this way
# Lightning's sinks: without `sync_dist=True` they log rank 0's value (`self.log(name, value)`,
# `self.log_dict(metrics)`); with it they reduce across ranks first.
SYNC_KEYWORD = "sync_dist"
# Imports of Lightning: a LightningModule or a Fabric loop runs distributed as accelerate's does.
LIGHTNING_MODULES = ("lightning", "pytorch_lightning", "lightning_fabric")
# Every method a sink call ends in but `log`, whose receiver decides (``logs_with_log``).
SINK_METHODS = frozenset(
    {name.rsplit(".", 1)[-1] for name in SELF_SINKS} - {"log"}
    | DICT_SINK_METHODS | SCALAR_SINK_METHODS | {SCALARS_SINK_METHOD, CALLBACK_SINK_METHOD, RECORD_METRIC_METHOD}
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
    # A run: `run`, `self._run`, `wandb_run` (what `wandb.init()` returns).
    is_run = receiver.lstrip("_") == "run" or receiver.endswith("_run")
    return any(word in receiver for word in LOGGING_RECEIVERS) or receiver == "wandb" or is_run


# Every value TRL004 checks reaches one of these: a sink call (`.log`, `log_metrics`,
# `add_scalar`...), a write to a run's log file, a metric buffer (`self._metrics`) or a helper whose dict the trainer logs
# (`get_batch_loss_metrics`). A file with none of them (and no project logger) is not parsed for it.
METRIC_SINK_MARKERS: tuple[Token, ...] = (
    "_metrics", "add_scalar", "log_dict", "log_metric", "on_log", "record_metric", re.compile(r"\.\s*log\s*\("),
    re.compile(r"\.\s*write\s*\("),  # a run's log file (log_files.py)
)
