"""The same torchrun script, which reduces the validation loss over the ranks before rank 0
logs it: the run's loss."""

import os

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.tensorboard import SummaryWriter

from utils import prepare_dataloaders, setup_ddp


def main(unet, epochs=100, val_interval=5):
    rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    dist, device = setup_ddp(rank, world_size)
    train_loader, val_loader = prepare_dataloaders(rank=rank, world_size=world_size)
    unet = DDP(unet.to(device), device_ids=[device], output_device=rank)
    optimizer = torch.optim.Adam(unet.parameters(), lr=1e-4)
    writer = SummaryWriter("runs/ldm") if rank == 0 else None
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        unet.train()
        for images, noise in train_loader:
            loss = F.mse_loss(unet(images.to(device)), noise.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if (epoch + 1) % val_interval == 0:
            unet.eval()
            val_epoch_loss = torch.zeros(1, device=device)
            with torch.no_grad():
                for step, (images, noise) in enumerate(val_loader):
                    val_epoch_loss += F.mse_loss(unet(images.to(device)), noise.to(device))
            val_epoch_loss = val_epoch_loss / (step + 1)
            dist.all_reduce(val_epoch_loss, op=dist.ReduceOp.AVG)
            if rank == 0:
                writer.add_scalar("val_diffusion_loss", val_epoch_loss.item(), epoch + 1)
    dist.destroy_process_group()
