"""torchrun --nproc_per_node 4 train.py --data imagenette"""

import os

import torch
import torch.distributed as dist
import torchvision
from torch import nn

from parallel import wrap_ddp

RANK = int(os.getenv("RANK", -1))


def train(data_dir, epochs=10):
    if RANK != -1:
        dist.init_process_group("nccl")
    device = torch.device("cuda", max(RANK, 0) % torch.cuda.device_count())
    dataset = torchvision.datasets.ImageFolder(data_dir, transform=torchvision.transforms.ToTensor())
    model = torchvision.models.resnet18(num_classes=len(dataset.classes)).to(device)
    # Read on the bare model, before the wrap.
    model.class_names = dataset.classes
    print("classes", model.class_names)
    if RANK != -1:
        model = wrap_ddp(model)
    # Set on the wrapper itself: the wrapper has it from here on.
    model.image_size = 224
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True)
    for epoch in range(epochs):
        model.train()
        for images, labels in loader:
            images = nn.functional.interpolate(images, size=model.image_size).to(device)
            loss = nn.functional.cross_entropy(model(images), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if RANK in {-1, 0}:
        bare = model.module if RANK != -1 else model
        print("last batch:", [bare.class_names[int(i)] for i in model(images).argmax(1)])


if __name__ == "__main__":
    train("data/imagenette")
