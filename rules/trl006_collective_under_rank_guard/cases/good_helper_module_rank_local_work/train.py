"""DPO-style preference tuning with accelerate: the weights are gathered on every rank and saved by one."""

import argparse

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer

from checkpointing import gather_full_state, save_weights, write_metrics


def sequence_logps(model, input_ids, attention_mask):
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
    logps = torch.gather(logits.log_softmax(-1), 2, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (logps * attention_mask[:, 1:]).sum(-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="mistralai/Mistral-7B-v0.3")
    parser.add_argument("--output_dir", default="out/dpo")
    parser.add_argument("--beta", type=float, default=0.1)
    args = parser.parse_args()

    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=torch.bfloat16)
    pairs = load_dataset("trl-lib/ultrafeedback_binarized", split="train[:1%]")
    loader = DataLoader(pairs.with_format("torch"), batch_size=2, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-7)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    losses = []
    for batch in loader:
        chosen = sequence_logps(model, batch["chosen_input_ids"], batch["chosen_attention_mask"])
        rejected = sequence_logps(model, batch["rejected_input_ids"], batch["rejected_attention_mask"])
        loss = -F.logsigmoid(args.beta * (chosen - rejected)).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        losses.append(accelerator.gather(loss.detach()).mean().item())

    state_dict = gather_full_state(accelerator, model)
    if accelerator.is_main_process:
        save_weights(state_dict, args.output_dir)
        write_metrics(accelerator, {"loss": sum(losses) / len(losses)}, args.output_dir)
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
