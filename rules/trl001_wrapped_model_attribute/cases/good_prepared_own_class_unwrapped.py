"""A two-tower model of the script's own, prepared by accelerate and read through its unwrapped module."""

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class TwoTower(nn.Module):
    def __init__(self, image_dim, text_dim, embed_dim=256):
        super().__init__()
        self.image_tower = nn.Linear(image_dim, embed_dim)
        self.text_tower = nn.Linear(text_dim, embed_dim)
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def encode_text(self, tokens):
        return F.normalize(self.text_tower(tokens), dim=-1)

    def forward(self, images, tokens):
        return F.normalize(self.image_tower(images), dim=-1), self.encode_text(tokens)


class Probe:
    """Not a module: what it holds is read as is."""

    def __init__(self, text_dim):
        self.tokens = torch.randn(8, text_dim)


def train(image_dim=768, text_dim=512, epochs=2):
    accelerator = Accelerator()
    model = TwoTower(image_dim, text_dim)
    # Read before the prepare: the bare module.
    optimizer = torch.optim.AdamW(list(model.image_tower.parameters()) + [model.logit_scale], lr=1e-4)
    loader = DataLoader(TensorDataset(torch.randn(512, image_dim), torch.randn(512, text_dim)), batch_size=32)
    probe = Probe(text_dim)
    model, optimizer, loader, probe = accelerator.prepare(model, optimizer, loader, probe)
    model.steps_done = 0  # set on the wrapper itself: the wrapper has it
    for epoch in range(epochs):
        for images, tokens in loader:
            image_emb, text_emb = model(images, tokens)
            scale = accelerator.unwrap_model(model).logit_scale.exp()
            logits = scale * image_emb @ text_emb.t()
            labels = torch.arange(logits.size(0), device=logits.device)
            loss = F.cross_entropy(logits, labels)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            model.steps_done += 1
        if accelerator.num_processes == 1:
            print(model.encode_text(probe.tokens.to(accelerator.device)).norm())
        # The module's own nn.Module members are the wrapper's too.
        model.eval()
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        model.train()
        accelerator.print(epoch, trainable, model.steps_done)

    bare = accelerator.unwrap_model(model)
    torch.save(bare.text_tower.state_dict(), "text_tower.pt")
