"""A metric turned into a Python float before it reaches the sink: there is no tensor left to
gather there, so the fix gathers where the number is made."""

from accelerate import Accelerator

from rules.trl004_ungathered_metric.scenarios.launch_step import run


def log_step(accelerator: Accelerator, batch):
    correct = (batch["predictions"] == batch["labels"]).float()
    accuracy = correct.mean().item()
    metrics = {"accuracy": accuracy}
    accelerator.log(metrics, step=0)
    return metrics


if __name__ == "__main__":
    run(log_step)
