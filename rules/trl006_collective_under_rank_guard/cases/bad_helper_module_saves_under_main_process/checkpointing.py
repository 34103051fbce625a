"""Writing checkpoints: the model's full weights and the tokenizer, in the Hub's layout."""

import os


def save_checkpoint(accelerator, model, tokenizer, output_dir):
    os.makedirs(output_dir, exist_ok=True)
    state_dict = accelerator.get_state_dict(model)
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(output_dir, state_dict=state_dict, safe_serialization=True)
    tokenizer.save_pretrained(output_dir)
