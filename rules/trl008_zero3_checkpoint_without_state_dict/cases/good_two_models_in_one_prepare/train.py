"""Adversarial fine-tuning of a VAE: the autoencoder and its discriminator are prepared in one call.

scripts/train.sh names a ZeRO-3 config, but accelerate refuses two models in one prepare under
DeepSpeed ("You can't use same `Accelerator()` instance with multiple models when using
DeepSpeed"): this script never runs under ZeRO-3, so its saves write whole weights."""

import argparse

import torch
from accelerate import Accelerator
from diffusers import AutoencoderKL

from discriminator import PatchDiscriminator


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained", default="stabilityai/sd-vae-ft-mse")
    parser.add_argument("--output_dir", default="outputs")
    args = parser.parse_args()

    accelerator = Accelerator()
    vae = AutoencoderKL.from_pretrained(args.pretrained)
    discriminator = PatchDiscriminator()
    optimizer = torch.optim.AdamW(vae.parameters(), lr=1e-5)
    disc_optimizer = torch.optim.AdamW(discriminator.parameters(), lr=1e-4)
    loader = torch.utils.data.DataLoader(torch.randn(64, 3, 64, 64), batch_size=8)
    vae, discriminator, optimizer, disc_optimizer, loader = accelerator.prepare(
        vae, discriminator, optimizer, disc_optimizer, loader
    )

    vae.train()
    discriminator.train()
    for images in loader:
        reconstruction = vae(images).sample
        fake = discriminator(reconstruction)
        loss = torch.nn.functional.mse_loss(reconstruction, images) - fake.mean() * 0.1
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        disc_loss = torch.nn.functional.softplus(discriminator(reconstruction.detach())).mean()
        accelerator.backward(disc_loss)
        disc_optimizer.step()
        disc_optimizer.zero_grad()

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        accelerator.unwrap_model(vae).save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
