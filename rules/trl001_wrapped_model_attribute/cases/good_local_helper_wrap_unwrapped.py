"""A helper of the script wraps under torchrun; every read of the model's own members goes to the bare module."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class Captioner(nn.Module):
    def __init__(self, vocab_size=32000, dim=512):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, tokens):
        return self.lm_head(self.embed(tokens))

    @torch.no_grad()
    def caption(self, tokens):
        return self(tokens).argmax(-1)


def is_distributed():
    """True under torchrun."""
    return dist.is_available() and dist.is_initialized()


def wrap_model(model):
    return DistributedDataParallel(model, device_ids=[int(os.environ["LOCAL_RANK"])])


def to_device(model):
    return model.cuda()


def evaluate(model, batches):
    return [model.caption(tokens) for tokens in batches]


def main():
    if "LOCAL_RANK" in os.environ:
        dist.init_process_group("nccl")
    model = to_device(Captioner())
    print(model.lm_head.weight.shape)
    if is_distributed():
        model = wrap_model(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    batches = [torch.randint(2, 32000, (16, 12), device="cuda") for _ in range(8)]
    for tokens in batches:
        loss = model(tokens).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(evaluate(model.module if is_distributed() else model, batches))
    if is_distributed():
        head = model.module.lm_head
    else:
        head = model.lm_head
    torch.save(head.state_dict(), "head.pt")


if __name__ == "__main__":
    main()
