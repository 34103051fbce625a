"""A segmentation trainer spawned with one process per GPU: each step sums its intersection,
union and target counts over every rank with in-place all-reduces written as one statement (a
tuple of calls) when the run is distributed, then logs the mean IoU and accuracy from rank 0. The counts are already the
run's: nothing to gather."""

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from segmentation import SegmentationDataset, SegmentationNet


def intersection_and_union(output, target, classes):
    predicted = output.argmax(1)
    intersection = torch.histc(predicted[predicted == target].float(), bins=classes, min=0, max=classes - 1)
    area_output = torch.histc(predicted.float(), bins=classes, min=0, max=classes - 1)
    area_target = torch.histc(target.float(), bins=classes, min=0, max=classes - 1)
    return intersection, area_output + area_target - intersection, area_target


def main_worker(gpu, args):
    dist.init_process_group("nccl", world_size=args.world_size, rank=gpu)
    model = DistributedDataParallel(SegmentationNet(args.classes).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr, momentum=0.9)
    dataset = SegmentationDataset(args.train_list)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=DistributedSampler(dataset))
    writer = SummaryWriter(args.save_path) if gpu == 0 else None
    for i, (images, target) in enumerate(loader):
        output, loss = model(images.cuda(gpu), target.cuda(gpu))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        intersection, union, target = intersection_and_union(output, target.cuda(gpu), args.classes)
        if args.multiprocessing_distributed:
            dist.all_reduce(intersection), dist.all_reduce(union), dist.all_reduce(target)
        intersection, union, target = intersection.cpu().numpy(), union.cpu().numpy(), target.cpu().numpy()
        if gpu == 0:
            writer.add_scalar("mIoU_train_batch", np.mean(intersection / (union + 1e-10)), i)
            writer.add_scalar("mAcc_train_batch", np.mean(intersection / (target + 1e-10)), i)


if __name__ == "__main__":
    from config import parse_args

    args = parse_args()
    mp.spawn(main_worker, nprocs=args.world_size, args=(args,))
