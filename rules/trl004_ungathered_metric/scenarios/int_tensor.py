"""An integer tensor logged as a number: `mean()` of its gather would raise
("mean(): could not infer output dtype"), so the fix casts it first."""

from accelerate import Accelerator

from rules.trl004_ungathered_metric.scenarios.launch_step import run


def log_step(accelerator: Accelerator, batch):
    position_ids = batch["position_ids"]
    sequence_length = (position_ids.max() + 1).item()
    metrics = {"sequence_length": sequence_length}
    accelerator.log(metrics, step=0)
    return metrics


if __name__ == "__main__":
    run(log_step)
