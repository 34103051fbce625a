"""A vocoder trained with mp.spawn, one process per GPU: rank 0 alone builds a validation loader
over the whole validation set (no sampler, no shuffle) and validates on it under its own rank
test. The mean error it logs is the whole set's, not a rank's slice: nothing to gather."""

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from dataset import AudioDataset
from models import Generator


def train(rank, config):
    dist.init_process_group("nccl", world_size=config.num_gpus, rank=rank)
    device = torch.device(f"cuda:{rank}")
    generator = DistributedDataParallel(Generator().to(device), device_ids=[rank])
    optimizer = torch.optim.AdamW(generator.parameters(), lr=config.lr)

    trainset = AudioDataset(config.train_files)
    train_sampler = DistributedSampler(trainset)
    train_loader = DataLoader(trainset, batch_size=config.batch_size, sampler=train_sampler, drop_last=True)
    if rank == 0:
        validset = AudioDataset(config.valid_files)
        validation_loader = DataLoader(validset, batch_size=1, shuffle=False, sampler=None)
        writer = SummaryWriter(config.log_dir)

    steps = 0
    for epoch in range(config.epochs):
        train_sampler.set_epoch(epoch)
        for audio, mel in train_loader:
            loss = F.l1_loss(generator(mel.to(device)), audio.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
            if rank == 0 and steps % config.validation_interval == 0:
                generator.eval()
                error_total = 0.0
                with torch.no_grad():
                    for j, (audio, mel) in enumerate(validation_loader):
                        error_total += F.l1_loss(generator(mel.to(device)), audio.to(device)).item()
                writer.add_scalar("validation/l1_error", error_total / (j + 1), steps)
                generator.train()


if __name__ == "__main__":
    from config import load_config

    config = load_config()
    mp.spawn(train, nprocs=config.num_gpus, args=(config,))
