"""A torchrun script in the style of MAE and DeiT: the validation set is sharded by a
DistributedSampler, and rank 0 writes to TensorBoard what evaluate() returns: averages over
its own shard, since the meters' synchronize hands the sums back without keeping them."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from engine import evaluate


def main(model, dataset_val, epochs):
    dist.init_process_group("nccl")
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    model = torch.nn.parallel.DistributedDataParallel(model.to(device), device_ids=[device])
    sampler_val = DistributedSampler(dataset_val, shuffle=False)
    data_loader_val = DataLoader(dataset_val, sampler=sampler_val, batch_size=64)
    log_writer = SummaryWriter("runs") if dist.get_rank() == 0 else None
    for epoch in range(epochs):
        test_stats = evaluate(data_loader_val, model, device)
        if log_writer is not None:
            # expect: TRL004
            log_writer.add_scalar("perf/test_acc1", test_stats["acc1"], epoch)
            # expect: TRL004
            log_writer.add_scalar("perf/test_loss", test_stats["loss"], epoch)
