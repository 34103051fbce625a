"""A boolean-masked selection: each rank keeps a different number of elements, so gathering the
selection itself aborts gloo ("Received data size doesn't match expected size"). The fix gathers
each rank's 0-d mean instead."""

from accelerate import Accelerator

from rules.trl004_ungathered_metric.scenarios.launch_step import run


def log_step(accelerator: Accelerator, batch):
    rewards = batch["rewards"]
    valid = batch["valid"]
    metrics = {"valid_reward": rewards[valid].mean().item()}
    accelerator.log(metrics, step=0)
    return metrics


if __name__ == "__main__":
    run(log_step)
