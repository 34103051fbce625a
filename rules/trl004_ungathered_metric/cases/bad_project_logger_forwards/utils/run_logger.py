"""The project's logger: one object for wandb and TensorBoard, made on the main process only."""

import wandb
from torch.utils.tensorboard import SummaryWriter


class RunLogger:
    def __init__(self, project, log_dir):
        self._run = wandb.init(project=project)
        self._writer = SummaryWriter(log_dir)

    def scalars(self, values, step):
        self._run.log(values, step=step)
        for tag, value in values.items():
            self._writer.add_scalar(tag, value, step)

    def scalar(self, tag, value, step):
        self.scalars({tag: value}, step)

    def close(self):
        self._writer.close()
        self._run.finish()
