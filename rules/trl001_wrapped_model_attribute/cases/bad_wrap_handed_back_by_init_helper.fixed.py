import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class GlowTTS(nn.Module):
    def __init__(self, channels=80):
        super().__init__()
        self.encoder = nn.Conv1d(channels, channels, 3, padding=1)
        self.decoder = nn.Conv1d(channels, channels, 3, padding=1)

    def forward(self, mel):
        return self.decoder(self.encoder(mel))

    @torch.no_grad()
    def inference(self, mel):
        return self.decoder(self.encoder(mel))


def data_dependent_init(loader, model):
    """Runs one pass in init mode, and hands the same model back."""
    model.train()
    for mel in loader:
        model(mel)
        break
    return model


def train(loader, model, optimizer, step):
    for mel in loader:
        loss = (model(mel) - mel).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0 and dist.get_rank() == 0:
            # expect: TRL001
            sample = getattr(model, "module", model).inference(mel[:1])
            print(step, sample.shape)
        step += 1
    return step


def main(rank, world_size, loader):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = GlowTTS().to(rank)
    if world_size > 1:
        model = DistributedDataParallel(model, device_ids=[rank])
    model = data_dependent_init(loader, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    step = 0
    for _ in range(10):
        step = train(loader, model, optimizer, step)
