"""TRL009 runtime scenario: generated token ids gathered without padding, on two CPU ranks.

Each rank generates continuations for its share of eight prompts (a tiny GPT-2 with random
weights, four new tokens each, no end-of-sequence token so that the count is fixed). The loader's
collate function left-pads each batch to its longest prompt, as ``DataCollatorWithPadding`` does,
so ``generate`` returns ``[batch, longest prompt + 4]``: a different length on each rank.
``accelerator.gather_for_metrics`` then hands gloo tensors of different sizes and the job aborts
(``Received data size doesn't match expected size``). After ``trllint --fix --unsafe-fixes`` the
ids are padded across processes first (with the id ``generate`` pads with); rank 0 prints, for
every prompt, the number of tokens that are not padding: its length plus the four generated.

    accelerate launch --multi_gpu --num_processes 2 scenario.py
"""

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

PAD_TOKEN_ID = 0
NEW_TOKENS = 4
# Rank 0's batch holds the first two prompts (longest: 3 tokens), rank 1's the next two (6).
PROMPTS = [
    [5, 6, 7], [8, 9], [10, 11, 12, 13, 14, 15], [16, 17, 18, 19],
    [20, 21], [22], [23, 24, 25, 26, 27], [28, 29, 30],
]


def left_pad(prompts):
    longest = max(len(p) for p in prompts)
    input_ids = torch.tensor([[PAD_TOKEN_ID] * (longest - len(p)) + p for p in prompts])
    attention_mask = torch.tensor([[0] * (longest - len(p)) + [1] * len(p) for p in prompts])
    return {"input_ids": input_ids, "attention_mask": attention_mask}


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=1, n_head=2, bos_token_id=1, eos_token_id=None)
    model = GPT2LMHeadModel(config)
    model.generation_config.eos_token_id = None
    eval_dataloader = DataLoader(PROMPTS, batch_size=2, collate_fn=left_pad)
    model, eval_dataloader = accelerator.prepare(model, eval_dataloader)
    model.eval()

    lengths = []
    for batch in eval_dataloader:
        with torch.no_grad():
            generated_tokens = accelerator.unwrap_model(model).generate(
                **batch, max_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=PAD_TOKEN_ID
            )
        generated_tokens = accelerator.gather_for_metrics(generated_tokens)
        lengths.extend((generated_tokens != PAD_TOKEN_ID).sum(dim=1).tolist())

    if accelerator.is_main_process:
        print(f"TRL009 tokens per prompt: {lengths}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
