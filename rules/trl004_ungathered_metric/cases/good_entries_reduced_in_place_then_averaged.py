"""A weather-model trainer that builds its epoch logs, then all-reduces each entry in place (through
``.detach()``, which shares the tensor's storage) and rebinds it to the ranks' mean before rank 0
hands the dict to wandb: every logged number is the run's."""

import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, model, loader, world_rank):
        self.model, self.loader, self.epoch = model, loader, 0
        self.optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
        self.log_to_wandb = world_rank == 0

    def train_one_epoch(self):
        self.epoch += 1
        for inp, tar in self.loader:
            self.optimizer.zero_grad()
            gen = self.model(inp.cuda())
            loss = torch.nn.functional.mse_loss(gen, tar.cuda())
            loss.backward()
            self.optimizer.step()
        logs = {"loss": loss, "rmse": torch.sqrt(loss.detach())}
        if dist.is_initialized():
            for key in sorted(logs.keys()):
                dist.all_reduce(logs[key].detach())
                logs[key] = float(logs[key] / dist.get_world_size())
        if self.log_to_wandb:
            wandb.log(logs, step=self.epoch)
        return logs


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(torch.nn.Conv2d(20, 20, 3, padding=1).cuda(), device_ids=[local_rank])
    dataset = torch.utils.data.TensorDataset(torch.randn(256, 20, 32, 32), torch.randn(256, 20, 32, 32))
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, sampler=torch.utils.data.DistributedSampler(dataset))
    if dist.get_rank() == 0:
        wandb.init(project="weather")
    trainer = Trainer(model, loader, dist.get_rank())
    for _ in range(10):
        trainer.train_one_epoch()


if __name__ == "__main__":
    main()
