"""Per-rank means stored in a buffer that the class's own log() reduces across ranks: the logged
numbers are already the run's, so there is nothing to report and a gather would count twice."""

from collections import defaultdict

import torch

from accelerate import Accelerator

from rules.trl004_ungathered_metric.scenarios.launch_step import run


class StepMetrics:
    def __init__(self, accelerator: Accelerator):
        self.accelerator = accelerator
        self._stored_metrics = defaultdict(lambda: defaultdict(list))

    def store(self, batch):
        correct = (batch["predictions"] == batch["labels"]).float()
        self._stored_metrics["train"]["accuracy"].append(correct.mean().item())

    def log(self, step):
        logs = {}
        for key, values in self._stored_metrics["train"].items():
            local_mean = torch.tensor(values).mean()
            logs[key] = self.accelerator.reduce(local_mean, "mean").item()
        self.accelerator.log(logs, step=step)
        self._stored_metrics["train"].clear()
        return logs


def log_step(accelerator: Accelerator, batch):
    step_metrics = StepMetrics(accelerator)
    step_metrics.store(batch)
    return step_metrics.log(step=0)


if __name__ == "__main__":
    run(log_step)
