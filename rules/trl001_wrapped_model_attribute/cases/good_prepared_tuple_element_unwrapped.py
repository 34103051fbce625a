"""The near miss of bad_prepared_tuple_element.py: the transformer taken out of prepare's tuple
is unwrapped before its config is read."""

import torch
from accelerate import Accelerator
from diffusers import FluxTransformer2DModel


def main(args, optimizer, lr_scheduler, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    transformer = FluxTransformer2DModel.from_pretrained(args.pretrained_model, subfolder="transformer")
    results = accelerator.prepare(transformer, lr_scheduler, optimizer, train_dataloader)
    transformer = results[0]
    lr_scheduler = results[1]
    optimizer = results[2]
    for batch in results[3]:
        with accelerator.accumulate(transformer):
            guidance = None
            if accelerator.unwrap_model(transformer).config.guidance_embeds:
                guidance = torch.full((batch["latents"].shape[0],), 3.5, device=accelerator.device)
            loss = transformer(batch["latents"], guidance=guidance).sample.float().pow(2).mean()
            accelerator.backward(loss)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
