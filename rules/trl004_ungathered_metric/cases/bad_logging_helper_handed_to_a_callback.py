"""The near miss of good_logging_helper_fed_no_batch.py: the file calls each logging helper with an
empty dict, but also hands it to the training loop as a callback (by name, or called in a lambda),
which calls it with this rank's losses: the calls the file shows are not all of them."""
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def log_losses(loss_dict, iteration, writer):
    for key in loss_dict:
        # expect: TRL004
        writer.add_scalar(key, loss_dict[key], iteration)


def log_eval_losses(eval_loss_dict, iteration, writer):
    for key in eval_loss_dict:
        # expect: TRL004
        writer.add_scalar("eval/" + key, eval_loss_dict[key], iteration)


def train(run_loop, model, optimizer, writer: SummaryWriter):
    log_losses({}, 0, writer)
    log_eval_losses({}, 0, writer)
    if dist.get_rank() == 0:
        run_loop(
            model,
            optimizer,
            on_losses=log_losses,
            on_eval=lambda losses, step: log_eval_losses(losses, step, writer),
        )
