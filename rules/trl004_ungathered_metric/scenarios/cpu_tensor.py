"""A metric moved to the CPU before it is logged. Gathering the CPU copy works under gloo and
fails under NCCL, which gathers GPU tensors only, at the first logged step: the fix gathers on the
device and moves the result to the CPU after."""

from accelerate import Accelerator

from rules.trl004_ungathered_metric.scenarios.launch_step import run


def log_step(accelerator: Accelerator, batch):
    correct = (batch["predictions"] == batch["labels"]).float()
    metrics = {"accuracy": correct.cpu().mean()}
    accelerator.log(metrics, step=0)
    return {key: float(value) for key, value in metrics.items()}


if __name__ == "__main__":
    run(log_step)
