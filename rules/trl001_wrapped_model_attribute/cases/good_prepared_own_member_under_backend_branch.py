"""A script that saves a DeepSpeed checkpoint through the engine where the run is DeepSpeed's,
and the bare model's weights otherwise: save_checkpoint is the engine's own method, read only
under DeepSpeed, where accelerate's prepare made the model one."""

import argparse

import torch
from accelerate import Accelerator, DistributedType
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, 128), nn.ReLU(), nn.Linear(128, 1))

    def forward(self, x):
        return self.body(x)


def main(args):
    accelerator = Accelerator()
    model = Regressor(args.width)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(torch.randn(512, args.width), torch.randn(512, 1)), batch_size=32)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    if accelerator.distributed_type == DistributedType.DEEPSPEED:
        model.save_checkpoint(args.output_dir)
    elif accelerator.is_main_process:
        torch.save(accelerator.unwrap_model(model).state_dict(), f"{args.output_dir}/model.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--output_dir", default="out")
    main(parser.parse_args())
