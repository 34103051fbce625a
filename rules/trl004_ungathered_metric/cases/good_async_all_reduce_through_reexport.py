"""A data-parallel trainer built on a framework that re-exports torch.distributed: the domain
losses are all-reduced in place with ``async_op=True`` while the step goes on, and logged after
``wait()``. The handles are not values; the reduced tensors are what reaches wandb."""

import torch
import wandb
from nanotron import distributed as dist
from nanotron.trainer import DistributedTrainer
from torch.nn.parallel import DistributedDataParallel


class DomainTrainer(DistributedTrainer):
    def __init__(self, config, model, optimizer, dp_group, local_rank, domain_names):
        super().__init__(config)
        self.model = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
        self.optimizer = optimizer
        self.dp_group = dp_group
        self.domain_names = domain_names
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
        domain_losses = outputs[0]["domain_losses"]
        handle_ce = dist.all_reduce(ce_loss, group=self.dp_group, async_op=True, op=dist.ReduceOp.AVG)
        handle_domains = dist.all_reduce(domain_losses, group=self.dp_group, async_op=True, op=dist.ReduceOp.AVG)
        handle_ce.wait()
        handle_domains.wait()
        if dist.get_rank(self.dp_group) == 0:
            per_domain = {f"loss/{name}": value for name, value in zip(self.domain_names, domain_losses.tolist())}
            wandb.log({**per_domain, "ce_loss": ce_loss.item(), "step": self.iteration_step})
