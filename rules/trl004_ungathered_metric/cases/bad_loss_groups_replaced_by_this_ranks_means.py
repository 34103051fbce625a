"""The near miss of good_loss_groups_replaced_by_a_project_helper/: each group is replaced in place
by its mean on this rank, so rank 0 logs its own shard's losses as the run's."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.tensorboard import SummaryWriter


def validate(model, loader, epoch):
    dist.init_process_group("nccl")
    model = DistributedDataParallel(model.cuda())
    writer = SummaryWriter() if dist.get_rank() == 0 else None
    for step, batch in enumerate(loader):
        losses = model(batch)
        for group, group_losses in losses.items():
            losses[group] = torch.stack(list(group_losses.values())).mean()
        if writer is not None:
            for group in losses:
                # expect: TRL004
                writer.add_scalar(f"val/{group}", float(losses[group]), epoch)
