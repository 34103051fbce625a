"""At the end of training the main process unwraps the text encoder to save the learned
embeddings; every rank then reads the embeddings, and on the other ranks the name still holds the
DDP wrapper, which does not forward get_input_embeddings (a Hugging Face model's method)."""

import torch
from accelerate import Accelerator


def train(args, text_encoder, optimizer, train_dataloader, placeholder_token_ids):
    accelerator = Accelerator()
    text_encoder, optimizer, train_dataloader = accelerator.prepare(text_encoder, optimizer, train_dataloader)
    text_encoder.requires_grad_(True)
    for batch in train_dataloader:
        loss = text_encoder(batch["input_ids"])[0].float().pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        text_encoder = accelerator.unwrap_model(text_encoder)
        text_encoder.save_pretrained(args.output_dir)
    # expect: TRL001
    updated_embs = accelerator.unwrap_model(text_encoder).get_input_embeddings().weight[placeholder_token_ids].data.detach().clone()
    torch.save(updated_embs, f"{args.output_dir}/learned_embeds.pt")
