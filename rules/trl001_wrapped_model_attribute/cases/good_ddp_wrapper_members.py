import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class VQModel(nn.Module):
    def __init__(self, codebook_size=512):
        super().__init__()
        self.codebook_size = codebook_size
        self.encoder = nn.Conv2d(3, 64, 4, stride=2, padding=1)
        self.codebook = nn.Embedding(codebook_size, 64)
        self.decoder = nn.ConvTranspose2d(64, 3, 4, stride=2, padding=1)

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def decode_code(self, codes):
        return self.decoder(self.codebook(codes).permute(0, 3, 1, 2))


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    model = VQModel().to(rank)
    # Read before the wrap: the model itself.
    codebook_size = model.codebook_size
    model = DDP(model, device_ids=[rank])
    # What DDP and nn.Module answer themselves, and what goes through .module.
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    print("codebook", codebook_size, "decoder", model.module.decoder, "device ids", model.device_ids)
    model.steps_done = 0
    for step in range(1000):
        images = torch.randn(16, 3, 64, 64, device=rank)
        context = model.no_sync() if step % 4 else torch.enable_grad()
        with context:
            loss = nn.functional.mse_loss(model(images), images)
            loss.backward()
        if step % 4 == 0:
            optimizer.step()
            optimizer.zero_grad()
        model.steps_done += 1
    model.eval()
    with torch.no_grad():
        codes = torch.randint(0, codebook_size, (1, 8, 8), device=rank)
        sample = model.module.decode_code(codes)
    if isinstance(model, DDP):
        state = model.module.state_dict()
    else:
        state = model.state_dict()
    torch.save({"model": state, "steps": model.steps_done, "sample": sample}, "vq.pt")


if __name__ == "__main__":
    main()
