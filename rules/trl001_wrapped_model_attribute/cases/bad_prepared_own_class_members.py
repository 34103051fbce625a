"""CLIP-style contrastive training of a two-tower model the script defines itself."""

import argparse

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class TwoTower(nn.Module):
    def __init__(self, image_dim, text_dim, embed_dim=256):
        super().__init__()
        self.image_tower = nn.Sequential(nn.Linear(image_dim, 512), nn.GELU(), nn.Linear(512, embed_dim))
        self.text_tower = nn.Sequential(nn.Linear(text_dim, 512), nn.GELU(), nn.Linear(512, embed_dim))
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def encode_image(self, images):
        return F.normalize(self.image_tower(images), dim=-1)

    def encode_text(self, tokens):
        return F.normalize(self.text_tower(tokens), dim=-1)

    def forward(self, images, tokens):
        return self.encode_image(images), self.encode_text(tokens)


def main(args):
    accelerator = Accelerator(mixed_precision="bf16")
    model = TwoTower(args.image_dim, args.text_dim)
    optimizer = torch.optim.AdamW(
        list(model.image_tower.parameters()) + list(model.text_tower.parameters()), lr=args.lr
    )
    data = TensorDataset(torch.randn(4096, args.image_dim), torch.randn(4096, args.text_dim))
    loader = DataLoader(data, batch_size=64, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    for epoch in range(args.epochs):
        for images, tokens in loader:
            image_emb, text_emb = model(images, tokens)
            # expect: TRL001
            logits = model.logit_scale.exp() * image_emb @ text_emb.t()
            labels = torch.arange(logits.size(0), device=logits.device)
            loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()

        with torch.no_grad():
            # expect: TRL001
            probe = model.encode_text(torch.randn(8, args.text_dim, device=accelerator.device))
        accelerator.print(f"epoch {epoch}: loss {loss.item():.4f}, probe norm {probe.norm():.3f}")

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        # expect: TRL001
        torch.save(model.text_tower.state_dict(), "text_tower.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--image-dim", type=int, default=768)
    parser.add_argument("--text-dim", type=int, default=512)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=3)
    main(parser.parse_args())
