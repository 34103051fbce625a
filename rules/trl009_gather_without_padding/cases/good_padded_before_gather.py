"""The no_trainer examples' way: pad the generated ids (and the labels, when the collator pads per
batch) across processes, then gather."""

import torch
from accelerate import Accelerator
from torch.nn import functional as F


def evaluate(args, model, tokenizer, eval_dataloader, metric, accelerator: Accelerator):
    gen_kwargs = {"max_length": args.val_max_target_length, "num_beams": args.num_beams}
    for batch in eval_dataloader:
        with torch.no_grad():
            generated_tokens = accelerator.unwrap_model(model).generate(
                batch["input_ids"], attention_mask=batch["attention_mask"], **gen_kwargs
            )
            generated_tokens = accelerator.pad_across_processes(generated_tokens, dim=1, pad_index=tokenizer.pad_token_id)
            labels = batch["labels"]
            if not args.pad_to_max_length:
                labels = accelerator.pad_across_processes(batch["labels"], dim=1, pad_index=tokenizer.pad_token_id)
            generated_tokens, labels = accelerator.gather_for_metrics((generated_tokens, labels))
            metric.add_batch(
                predictions=tokenizer.batch_decode(generated_tokens, skip_special_tokens=True),
                references=tokenizer.batch_decode(labels, skip_special_tokens=True),
            )


def sample(model, prompts, accelerator, max_length=128):
    tokens = accelerator.unwrap_model(model).generate(**prompts, max_length=max_length)
    tokens = F.pad(tokens, (0, max_length - tokens.shape[1]), value=0)  # every rank to max_length
    inline = accelerator.gather(accelerator.pad_across_processes(model.generate(**prompts), dim=1))
    return accelerator.gather(tokens), inline
