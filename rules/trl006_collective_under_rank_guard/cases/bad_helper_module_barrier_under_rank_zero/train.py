"""ResNet-50 on ImageNet with DistributedDataParallel, started by torchrun."""

import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import dist_utils


def main():
    dist_utils.setup()
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(torchvision.models.resnet50().cuda(), device_ids=[local_rank])
    dataset = torchvision.datasets.ImageFolder("/data/imagenet/train", torchvision.transforms.ToTensor())
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = torch.nn.CrossEntropyLoss()

    for epoch in range(90):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = criterion(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            # expect: TRL006
            dist_utils.save_and_sync(model, optimizer, epoch, f"checkpoints/epoch_{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
