"""Captioning model fine-tuned under torchrun; the wrap is left to a helper of the script."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class Captioner(nn.Module):
    def __init__(self, vocab_size=32000, dim=512):
        super().__init__()
        self.vision_proj = nn.Linear(768, dim)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(dim, 8, batch_first=True), 4)
        self.lm_head = nn.Linear(dim, vocab_size)
        self.embed = nn.Embedding(vocab_size, dim)

    def forward(self, images, tokens):
        memory = self.vision_proj(images)
        return self.lm_head(self.decoder(self.embed(tokens), memory))

    @torch.no_grad()
    def caption(self, images, bos_id=1, max_len=20):
        tokens = torch.full((images.size(0), 1), bos_id, device=images.device)
        for _ in range(max_len):
            next_token = self(images, tokens)[:, -1].argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, next_token], dim=1)
        return tokens


def is_distributed():
    return dist.is_available() and dist.is_initialized()


def wrap_model(model):
    return DistributedDataParallel(model, device_ids=[int(os.environ["LOCAL_RANK"])])


def evaluate(model, batches):
    lengths = []
    for images in batches:
        # expect: TRL001
        tokens = model.caption(images)
        lengths.append((tokens != 0).sum(1).float().mean())
    return torch.stack(lengths).mean().item()


def main():
    if "LOCAL_RANK" in os.environ:
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = Captioner().cuda()
    if is_distributed():
        model = wrap_model(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    batches = [torch.randn(16, 49, 768, device="cuda") for _ in range(8)]
    for step in range(200):
        images = batches[step % len(batches)]
        tokens = torch.randint(2, 32000, (16, 12), device="cuda")
        logits = model(images, tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # expect: TRL001
    head = model.lm_head.weight.norm().item()
    print("mean caption length", evaluate(model, batches), "head norm", head)


if __name__ == "__main__":
    main()
