"""A force-field trainer that accumulates its validation loss in a torchmetrics ``Metric`` of its
own and logs what ``compute()`` returns: torchmetrics syncs each state across ranks (by its
``dist_reduce_fx``) before it computes, so rank 0 logs the run's loss."""

import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel
from torchmetrics import Metric


class EnergyLoss(Metric):
    def __init__(self, loss_fn):
        super().__init__()
        self.loss_fn = loss_fn
        self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("count", default=torch.tensor(0.0), dist_reduce_fx="sum")

    def update(self, predicted, target):
        self.total += self.loss_fn(predicted, target) * target.numel()
        self.count += target.numel()

    def compute(self):
        return self.total / self.count


def evaluate(model, loss_fn, data_loader, device):
    metric = EnergyLoss(loss_fn=loss_fn).to(device)
    for positions, energy in data_loader:
        predicted = model(positions.to(device)).squeeze(-1)
        loss = metric(predicted, energy.to(device))
    loss = metric.compute()
    metric.reset()
    return loss


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    model = DistributedDataParallel(torch.nn.Linear(3, 1).to(device), device_ids=[local_rank])
    dataset = torch.utils.data.TensorDataset(torch.randn(1024, 3), torch.randn(1024))
    loader = torch.utils.data.DataLoader(dataset, batch_size=32, sampler=torch.utils.data.DistributedSampler(dataset))
    if dist.get_rank() == 0:
        wandb.init(project="force-field")
    for epoch in range(10):
        valid_loss = evaluate(model, torch.nn.functional.mse_loss, loader, device)
        if dist.get_rank() == 0:
            wandb.log({"valid/loss": valid_loss.item()}, step=epoch)


if __name__ == "__main__":
    main()
