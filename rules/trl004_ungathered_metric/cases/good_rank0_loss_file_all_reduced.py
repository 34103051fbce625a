"""The near miss of bad_rank0_loss_written_to_log_file.py: the losses are averaged over the ranks
before the master process writes them to the run's log file; every rank writes its own progress
file (no rank test: each file is one rank's record, named as such); rank 0 writes the text its
model generated, which is no statistic; and the console line is only a print."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def evaluate(model, loader, steps):
    total = torch.zeros((), device="cuda")
    with torch.no_grad():
        for _, (x_val, y_val) in zip(range(steps), loader):
            _, loss = model(x_val.cuda(), y_val.cuda())
            total += loss.detach()
    return total / steps


def train(model, tokenizer, train_loader, val_loader, out_dir, steps=5000, val_every=250):
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    logfile = os.path.join(out_dir, "train.log")
    for step, (x, y) in enumerate(train_loader):
        if step % val_every == 0:
            model.eval()
            val_loss = evaluate(model, val_loader, 20)
            dist.all_reduce(val_loss, op=dist.ReduceOp.AVG)
            if rank == 0:
                with open(logfile, "a") as f:
                    f.write(f"{step} val {val_loss.item():.4f}\n")
                prompt = tokenizer("Once upon a time", return_tensors="pt").input_ids.cuda()
                sample = tokenizer.decode(model.module.generate(prompt, max_new_tokens=64)[0])
                with open(os.path.join(out_dir, "samples.txt"), "a") as f:
                    f.write(f"step {step}: {sample}\n")
            model.train()
        _, loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        with open(os.path.join(out_dir, f"progress_rank{rank}.log"), "a") as f:
            f.write(f"{step} {loss.item():.4f}\n")
        if rank == 0:
            print(f"step {step} loss {loss.item():.4f}")
        reduced = loss.detach().clone()
        dist.all_reduce(reduced, op=dist.ReduceOp.AVG)
        if rank == 0:
            with open(logfile, "a") as f:
                f.write("%d train %f\n" % (step, reduced.item()))
    dist.destroy_process_group()
