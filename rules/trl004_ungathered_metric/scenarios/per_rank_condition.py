"""A metric logged only on ranks whose batch has a valid element: a gather there would leave the
other ranks waiting forever, so no safe fix exists; --unsafe-fixes says why."""

from accelerate import Accelerator

from rules.trl004_ungathered_metric.scenarios.launch_step import run


def log_step(accelerator: Accelerator, batch):
    rewards = batch["rewards"]
    valid = batch["valid"]
    metrics = {}
    if valid.any():
        metrics["valid_reward"] = rewards[valid].mean().item()
    accelerator.log(metrics, step=0)
    return metrics


if __name__ == "__main__":
    run(log_step)
