"""One epoch of evaluation: each process scores its shard, then the meters sum the processes'
counts and totals, so the averages returned are the run's."""
import torch

import util.misc as misc


@torch.no_grad()
def evaluate(data_loader, model, device):
    criterion = torch.nn.CrossEntropyLoss()
    metric_logger = misc.MetricLogger()
    model.eval()
    for images, target in data_loader:
        images, target = images.to(device), target.to(device)
        output = model(images)
        loss = criterion(output, target)
        acc1 = (output.argmax(-1) == target).float().mean() * 100
        metric_logger.update(loss=loss.item())
        metric_logger.meters["acc1"].update(acc1.item(), n=images.shape[0])
    metric_logger.synchronize_between_processes()
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}
