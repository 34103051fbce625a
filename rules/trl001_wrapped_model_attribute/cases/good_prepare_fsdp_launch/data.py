"""Instance images and their prompt, tokenized once."""

from pathlib import Path

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms


class InstanceDataset(Dataset):
    def __init__(self, folder, tokenizer, prompt, size=512):
        self.images = sorted(Path(folder).iterdir())
        self.prompt_ids = tokenizer(prompt, padding="max_length", truncation=True, return_tensors="pt").input_ids[0]
        self.transform = transforms.Compose([transforms.Resize(size), transforms.CenterCrop(size), transforms.ToTensor()])

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        image = Image.open(self.images[index]).convert("RGB")
        return {"pixel_values": self.transform(image) * 2 - 1, "input_ids": self.prompt_ids}


def build_dataloader(folder, tokenizer, prompt, batch_size=1):
    dataset = InstanceDataset(folder, tokenizer, prompt)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True)


def collate_prompts(batch):
    return torch.stack([example["input_ids"] for example in batch])
