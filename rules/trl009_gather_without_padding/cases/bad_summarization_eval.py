"""A no_trainer summarization evaluation that pads the labels but not the generated ids."""

import evaluate
import torch
from accelerate import Accelerator
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer


def evaluate_rouge(args, eval_dataloader):
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model_name_or_path)
    model, eval_dataloader = accelerator.prepare(model, eval_dataloader)
    metric = evaluate.load("rouge")
    gen_kwargs = {"max_length": args.val_max_target_length, "num_beams": args.num_beams}
    model.eval()
    for batch in eval_dataloader:
        with torch.no_grad():
            generated_tokens = accelerator.unwrap_model(model).generate(
                batch["input_ids"], attention_mask=batch["attention_mask"], **gen_kwargs
            )
            labels = accelerator.pad_across_processes(batch["labels"], dim=1, pad_index=tokenizer.pad_token_id)
            # expect: TRL009
            generated_tokens, labels = accelerator.gather_for_metrics((generated_tokens, labels))
            decoded_preds = tokenizer.batch_decode(generated_tokens.cpu().numpy(), skip_special_tokens=True)
            labels = torch.where(labels != -100, labels, tokenizer.pad_token_id)
            decoded_labels = tokenizer.batch_decode(labels.cpu().numpy(), skip_special_tokens=True)
            metric.add_batch(predictions=decoded_preds, references=decoded_labels)
    return metric.compute(use_stemmer=True)
