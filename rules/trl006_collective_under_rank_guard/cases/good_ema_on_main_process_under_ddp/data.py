"""The image dataset the training script reads: the same folder on every rank."""

import torch
from torchvision import datasets, transforms


def make_loader(data_dir, resolution, batch_size):
    preprocess = transforms.Compose([transforms.Resize(resolution), transforms.CenterCrop(resolution), transforms.ToTensor()])
    dataset = datasets.ImageFolder(data_dir, transform=preprocess)
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4)
