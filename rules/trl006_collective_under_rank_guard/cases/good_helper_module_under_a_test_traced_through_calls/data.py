"""CIFAR-100 at 224 pixels, split across ranks by a DistributedSampler."""

from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms


def build_loaders(batch_size):
    transform = transforms.Compose([transforms.Resize(224), transforms.ToTensor()])
    train = datasets.CIFAR100("data", train=True, download=True, transform=transform)
    val = datasets.CIFAR100("data", train=False, download=True, transform=transform)
    return (
        DataLoader(train, batch_size=batch_size, sampler=DistributedSampler(train)),
        DataLoader(val, batch_size=batch_size, sampler=DistributedSampler(val, shuffle=False)),
    )
