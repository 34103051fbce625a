"""The twin of good_async_all_reduce_through_reexport: the trainer all-reduces a copy of its loss
with ``async_op=True`` and prints it, but wandb gets the loss it copied from."""

import torch
import wandb
from nanotron import distributed as dist
from nanotron.trainer import DistributedTrainer
from torch.nn.parallel import DistributedDataParallel


class DomainTrainer(DistributedTrainer):
    def __init__(self, config, model, optimizer, dp_group, local_rank):
        super().__init__(config)
        self.model = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
        self.optimizer = optimizer
        self.dp_group = dp_group
        self.iteration_step = 0

    def train_step(self, batch):
        outputs = self.model(**batch)
        loss = torch.stack([output["loss"] for output in outputs]).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.iteration_step += 1
        self.log_step(outputs)

    def log_step(self, outputs):
        ce_loss = torch.stack([output["ce_loss"] for output in outputs]).sum()
        mean_ce_loss = ce_loss.detach().clone()
        handle = dist.all_reduce(mean_ce_loss, group=self.dp_group, async_op=True, op=dist.ReduceOp.AVG)
        handle.wait()
        if dist.get_rank(self.dp_group) == 0:
            print(f"step {self.iteration_step}: ce_loss {mean_ce_loss.item():.4f}")
            # expect: TRL004
            wandb.log({"ce_loss": ce_loss.item(), "step": self.iteration_step})
