"""The same validation on rank 0 only, of what the wrapper holds (``model.module``), or through a
wrapper made with ``broadcast_buffers=False``: neither forward enters a collective."""

import os

import torch
import torch.distributed as dist
import torchvision
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def evaluate(model, val_loader):
    with torch.no_grad():
        return sum((model(images.cuda()).argmax(1) == labels.cuda()).sum().item() for images, labels in val_loader)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(torchvision.models.resnet50(num_classes=100).cuda(), device_ids=[local_rank])
    head = DistributedDataParallel(nn.Linear(2048, 100).cuda(), device_ids=[local_rank], broadcast_buffers=False)
    optimizer = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1, momentum=0.9)
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
            with torch.no_grad():
                for images, labels in val_loader:
                    logits = model.module(images.cuda())
                    probe = head(torch.randn(images.shape[0], 2048, device="cuda"))
            print(f"epoch {epoch}: top-1 {evaluate(model.module, val_loader) / len(val_set):.3f}", logits.shape, probe.shape)


if __name__ == "__main__":
    main()
