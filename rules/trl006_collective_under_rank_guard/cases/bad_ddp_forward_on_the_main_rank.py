"""A ResNet classifier under torchrun that validates on rank 0 only, through the DDP wrapper: the
wrapper broadcasts the batch-norm buffers from rank 0 before the first forward after a training
step, and the other ranks, already in their next step, meet a different collective."""

import os

import torch
import torch.distributed as dist
import torchvision
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank):
    return DistributedDataParallel(model, device_ids=[local_rank])


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = wrap(torchvision.models.resnet50(num_classes=100).cuda(), local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train_set = torchvision.datasets.CIFAR100("data", train=True, transform=torchvision.transforms.ToTensor())
    val_set = torchvision.datasets.CIFAR100("data", train=False, transform=torchvision.transforms.ToTensor())
    sampler = torch.utils.data.DistributedSampler(train_set)
    loader = torch.utils.data.DataLoader(train_set, batch_size=128, sampler=sampler)
    val_loader = torch.utils.data.DataLoader(val_set, batch_size=256)
    for epoch in range(90):
        sampler.set_epoch(epoch)
        model.train()
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            model.eval()
            correct = 0
            with torch.no_grad():
                for images, labels in val_loader:
                    # expect: TRL006
                    correct += (model(images.cuda()).argmax(1) == labels.cuda()).sum().item()
            print(f"epoch {epoch}: top-1 {correct / len(val_set):.3f}")


if __name__ == "__main__":
    main()
