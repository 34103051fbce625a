"""A validation loop whose model returns its losses in groups: each group is replaced in place by
the package's `reduce_dict` of it, so every entry the loop visits holds the mean over the ranks
before rank 0 averages the steps and logs them (VQ-Diffusion's solver)."""
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.tensorboard import SummaryWriter

from synthesis.distributed import reduce_dict


def validate(model, loader, epoch):
    dist.init_process_group("nccl")
    model = DistributedDataParallel(model.cuda())
    writer = SummaryWriter() if dist.get_rank() == 0 else None
    overall = None
    for step, batch in enumerate(loader):
        losses = model(batch)
        for group, group_losses in losses.items():
            losses[group] = reduce_dict(group_losses)
        if overall is None:
            overall = losses
        else:
            for group, group_losses in losses.items():
                for k, v in group_losses.items():
                    overall[group][k] = (overall[group][k] * step + v) / (step + 1)
    if writer is not None:
        for group, group_losses in overall.items():
            for k in group_losses:
                writer.add_scalar(f"val/{group}/{k}", float(group_losses[k]), epoch)
