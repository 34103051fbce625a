"""A logging helper whose parameters are named like data (``loss_dict``, ``total_loss_dict``) but
whose one caller in this file hands it what the step returns: losses the step all-reduced over the
data-parallel group (or read from a pipeline schedule this file does not show) and a dict of running
totals it starts empty. The helper's values are what its caller passes, as they would be inline."""
import time

import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def train_step(schedule, data_iterator, model, optimizer, dp_group):
    microbatch_losses = schedule(data_iterator, model)  # one {name: (sum, count)} per microbatch
    optimizer.step()
    reported = {}
    for key in microbatch_losses[0]:
        totals = torch.stack([losses[key] for losses in microbatch_losses]).sum(dim=0)
        dist.all_reduce(totals, group=dp_group)
        reported[key] = totals[0] / totals[1]
    return reported, optimizer.param_groups[0]["lr"]


def log_training(loss_dict, total_loss_dict, iteration, learning_rate, writer, started):
    for key in loss_dict:
        total_loss_dict[key] = total_loss_dict.get(key, 0.0) + loss_dict[key]
        writer.add_scalar(key, loss_dict[key], iteration)
    total_loss_dict["iterations"] = total_loss_dict.get("iterations", 0) + 1
    seconds_per_iteration = (time.time() - started) / total_loss_dict["iterations"]
    writer.add_scalar("iteration-time", seconds_per_iteration, iteration)
    writer.add_scalar("learning-rate", learning_rate, iteration)


def train(schedule, data_iterator, model, optimizer, dp_group, train_iters):
    writer = SummaryWriter() if dist.get_rank() == dist.get_world_size() - 1 else None
    total_loss_dict = {}
    started = time.time()
    for iteration in range(train_iters):
        loss_dict, learning_rate = train_step(schedule, data_iterator, model, optimizer, dp_group)
        if writer is not None:
            log_training(loss_dict, total_loss_dict, iteration, learning_rate, writer, started)
