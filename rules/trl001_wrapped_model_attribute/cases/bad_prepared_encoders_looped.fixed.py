"""Two text encoders come back from accelerator.prepare (DDP wrappers under a multi-GPU launch),
kept in a list and under another name; the reads through those get the encoders' own members
through the wrappers, which forward none of them."""

import torch
from accelerate import Accelerator


def train(args, text_encoder1, text_encoder2, tokenizers, token_ids_list, optimizer, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    text_encoder1, text_encoder2, optimizer, train_dataloader = accelerator.prepare(
        text_encoder1, text_encoder2, optimizer, train_dataloader
    )
    text_encoders = [text_encoder1, text_encoder2]
    second = text_encoder2
    # expect: TRL001
    hidden_size = accelerator.unwrap_model(second).config.hidden_size
    for tokenizer, token_ids, text_encoder in zip(tokenizers, token_ids_list, text_encoders):
        text_encoder.requires_grad_(True)
        # expect: TRL001
        accelerator.unwrap_model(text_encoder).text_model.encoder.requires_grad_(False)
    for epoch in range(args.epochs):
        for text_encoder in text_encoders:
            text_encoder.train()
        for batch in train_dataloader:
            with accelerator.accumulate(text_encoders[0]):
                loss = sum(encoder(batch["input_ids"])[0].float().pow(2).mean() for encoder in text_encoders)
                accelerator.backward(loss)
                # expect: TRL001
                params_to_clip = accelerator.unwrap_model(text_encoder).get_input_embeddings().parameters()
                accelerator.clip_grad_norm_(params_to_clip, 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
