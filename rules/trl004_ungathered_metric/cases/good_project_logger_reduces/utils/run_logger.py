"""The project's logger: it averages every value over the processes before it logs it, so each
rank calls it (the main process alone writes)."""

import torch
import torch.distributed as dist
import wandb


class RunLogger:
    def __init__(self, project, is_main):
        self._run = wandb.init(project=project) if is_main else None

    def scalars(self, values, step):
        averaged = {}
        for tag, value in values.items():
            tensor = torch.as_tensor(value, device="cuda", dtype=torch.float32)
            dist.all_reduce(tensor, op=dist.ReduceOp.AVG)
            averaged[tag] = tensor.item()
        if self._run is not None:
            self._run.log(averaged, step=step)
