import os

import torch
import torch.distributed as dist


def save(model, path, args):
    rank = dist.get_rank()
    is_master = rank == 0
    if is_master:
        torch.save(model.state_dict(), path)
        # expect: TRL006
        dist.barrier()
    # expect: TRL006
    dist.barrier()
    if args.local_rank in (-1, 0):
        print("synchronised")


def average_loss(loss):
    if int(os.environ["LOCAL_RANK"]) == 0:
        # in place: the other ranks' tensor would change too, so no fix
        # expect: TRL006
        dist.all_reduce(loss)
        loss /= dist.get_world_size()
    return loss


def broadcast_config(config):
    if dist.get_rank() != 0:
        return config
    # expect: TRL006
    dist.broadcast_object_list([config], src=0)
    return config


def train_loop(model, loader):
    for batch in loader:
        loss = model(batch)
        if loss.isnan():
            continue  # this rank skips the step; the others wait in all_reduce below
        loss.backward()
        for param in model.parameters():
            # expect: TRL006
            dist.all_reduce(param.grad)
