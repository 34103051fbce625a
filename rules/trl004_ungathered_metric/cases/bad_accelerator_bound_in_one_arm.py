# The accelerator exists only when --distributed is passed: a fix naming it would raise on the
# other path, so the finding comes without one.
import torch
from accelerate import Accelerator
from torch.utils.tensorboard import SummaryWriter


def train(model, optimizer, loader, args):
    writer = SummaryWriter(args.log_dir)
    if args.distributed:
        accelerator = Accelerator()
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, (images, labels) in enumerate(loader):
        logits = model(images)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        top1 = (logits.argmax(-1) == labels).float()
        # expect: TRL004
        writer.add_scalar("train/top1", top1.mean().item(), step)
