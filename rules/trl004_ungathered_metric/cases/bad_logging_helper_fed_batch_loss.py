"""The near miss of good_logging_helper_fed_no_batch.py: one caller of the logging helper hands it
this rank's loss, straight from the model's output on its batch."""
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def log_training(loss_dict, iteration, writer):
    for key in loss_dict:
        # expect: TRL004
        writer.add_scalar(key, loss_dict[key], iteration)


def train(model, loader, optimizer, writer: SummaryWriter):
    log_training({}, 0, writer)
    for iteration, batch in enumerate(loader, start=1):
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            log_training({"lm": outputs.loss.detach()}, iteration, writer)
