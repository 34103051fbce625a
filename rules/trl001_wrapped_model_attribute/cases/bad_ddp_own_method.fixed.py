import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class SoundStream(nn.Module):
    def __init__(self, codebook_size=1024):
        super().__init__()
        self.encoder = nn.Conv1d(1, 128, 7, padding=3)
        self.quantizer = nn.Embedding(codebook_size, 128)
        self.decoder = nn.ConvTranspose1d(128, 1, 7, padding=3)
        self.discriminator = nn.Conv1d(1, 1, 15, padding=7)

    def forward(self, audio):
        return self.decoder(self.encoder(audio))

    def decode_code(self, codes):
        return self.decoder(self.quantizer(codes).transpose(1, 2))

    def discr_parameters(self):
        return self.discriminator.parameters()

    def non_discr_parameters(self):
        return [p for name, p in self.named_parameters() if not name.startswith("discriminator.")]


class SoundStreamTrainer:
    def __init__(self, soundstream, rank):
        self.rank = rank
        self.soundstream = DistributedDataParallel(soundstream.to(rank), device_ids=[rank])
        # expect: TRL001
        self.optim = torch.optim.Adam(self.soundstream.module.non_discr_parameters(), lr=2e-4)
        # expect: TRL001
        self.discr_optim = torch.optim.Adam(self.soundstream.module.discr_parameters(), lr=2e-4)

    def train_step(self, audio):
        loss = (self.soundstream(audio) - audio).abs().mean()
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return loss.item()

    @torch.no_grad()
    def sample(self, codes):
        # expect: TRL001
        return self.soundstream.module.decode_code(codes)


def run(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    trainer = SoundStreamTrainer(SoundStream(), rank)
    for _ in range(100):
        trainer.train_step(torch.randn(4, 1, 16000, device=rank))
    trainer.sample(torch.randint(0, 1024, (1, 50), device=rank))
