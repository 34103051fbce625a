"""A torchrun script that gets its process group from a helper of its project and imports only
DistributedDataParallel: it still runs on several processes. Rank 0 logs the validation loss of
its own shard of the validation set as the run's."""

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
            val_epoch_loss = 0
            with torch.no_grad():
                for step, (images, noise) in enumerate(val_loader):
                    val_loss = F.mse_loss(unet(images.to(device)), noise.to(device))
                    val_epoch_loss += val_loss.item()
            val_epoch_loss = val_epoch_loss / (step + 1)
            if rank == 0:
                # expect: TRL004
                writer.add_scalar("val_diffusion_loss", val_epoch_loss, epoch + 1)
    dist.destroy_process_group()
