"""The near miss of bad_unwrapped_on_main_process_only.py: the main process unwraps the text
encoder and reads its embeddings in the same branch, where the name holds the bare model."""

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
        updated_embs = text_encoder.get_input_embeddings().weight[placeholder_token_ids].data.detach().clone()
        torch.save(updated_embs, f"{args.output_dir}/learned_embeds.pt")
