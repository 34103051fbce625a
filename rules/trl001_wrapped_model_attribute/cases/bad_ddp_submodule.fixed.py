import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Decoder(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv_in = nn.Conv2d(channels, 64, 3, padding=1)
        self.conv_out = nn.Conv2d(64, 3, 3, padding=1)

    def forward(self, x):
        return self.conv_out(torch.relu(self.conv_in(x)))


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv2d(3, 16, 3, padding=1)
        self.decoder = Decoder(16)

    def forward(self, x):
        return self.decoder(self.encoder(x))


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = AutoEncoder().cuda()
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(1000):
        images = torch.randn(8, 3, 64, 64, device="cuda")
        loss = nn.functional.mse_loss(model(images), images)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0 and dist.get_rank() == 0:
            # expect: TRL001
            last_layer = model.module.decoder.conv_out.weight
            print(step, loss.item(), last_layer.norm().item())


if __name__ == "__main__":
    main()
