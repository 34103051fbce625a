"""A torchrun pretraining loop with no tracker: the master process keeps the run's record in a log
file (the curves are plotted from it) and writes there the training loss of its own micro-batch
and the validation loss over its own shard of the validation set. Both are rank 0's sample, not
the run's; the step and the learning rate beside them are the same on every rank."""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class ShardedTokens:
    def __init__(self, path, batch_size, seq_len, rank, world_size):
        self.tokens = torch.load(path)
        self.batch_size, self.seq_len = batch_size, seq_len
        self.rank, self.world_size = rank, world_size
        self.reset()

    def reset(self):
        self.position = self.rank * self.batch_size * self.seq_len

    def next_batch(self):
        span = self.batch_size * self.seq_len
        chunk = self.tokens[self.position : self.position + span + 1]
        self.position += span * self.world_size
        if self.position + span + 1 > len(self.tokens):
            self.reset()
        return chunk[:-1].view(self.batch_size, -1).cuda(), chunk[1:].view(self.batch_size, -1).cuda()


def train(model, train_path, val_path, out_dir, steps=5000, val_every=250, val_steps=20, lr=6e-4):
    dist.init_process_group(backend="nccl")
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    master_process = rank == 0
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    train_loader = ShardedTokens(train_path, 16, 1024, rank, world_size)
    val_loader = ShardedTokens(val_path, 16, 1024, rank, world_size)

    logfile = None
    if master_process:
        os.makedirs(out_dir, exist_ok=True)
        logfile = os.path.join(out_dir, "train.log")
        with open(logfile, "w") as f:
            f.write("step kind value\n")

    x, y = train_loader.next_batch()
    for step in range(steps + 1):
        if step % val_every == 0 or step == steps:
            model.eval()
            val_loader.reset()
            val_loss = 0.0
            with torch.no_grad():
                for _ in range(val_steps):
                    x_val, y_val = val_loader.next_batch()
                    _, loss = model(x_val, y_val)
                    val_loss += loss.item()
            val_loss /= val_steps
            if master_process:
                with open(logfile, "a") as f:
                    # expect: TRL004
                    f.write(f"{step} val {val_loss:.4f}\n")
        if step == steps:
            break
        model.train()
        t0 = time.time()
        _, loss = model(x, y)
        x, y = train_loader.next_batch()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        train_loss = loss.item()
        if master_process and logfile is not None:
            with open(logfile, "a") as f:
                # expect: TRL004
                f.write("%d train %f %.2e %.1fms\n" % (step, train_loss, optimizer.param_groups[0]["lr"], (time.time() - t0) * 1000))
    dist.destroy_process_group()
