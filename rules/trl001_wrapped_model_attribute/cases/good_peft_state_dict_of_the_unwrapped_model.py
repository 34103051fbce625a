"""LoRA fine-tuning that hands peft the unwrapped model, and a project helper of the same name."""

import argparse

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from peft import LoraConfig, get_peft_model
from peft import get_peft_model_state_dict as adapter_weights
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM


def get_peft_model_state_dict(model):
    """The project's own: the trainable weights of whatever it is handed, wrapper or not."""
    return {name: p.detach().cpu() for name, p in model.named_parameters() if p.requires_grad}


def main(args):
    accelerator = Accelerator()
    model = AutoModelForCausalLM.from_pretrained(args.model)
    model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    loader = torch.utils.data.DataLoader(torch.load(args.data), batch_size=4, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    for step, batch in enumerate(loader):
        logits = model(input_ids=batch["input_ids"]).logits
        loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), batch["input_ids"][:, 1:].flatten())
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if accelerator.is_main_process and step % 100 == 0:
            save_file(get_peft_model_state_dict(model), f"trainable-{step}.safetensors")
            save_file(adapter_weights(accelerator.unwrap_model(model)), f"adapter-{step}.safetensors")
    unwrapped = accelerator.unwrap_model(model)
    save_file(adapter_weights(unwrapped), "adapter-final.safetensors")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="meta-llama/Llama-3.2-1B")
    parser.add_argument("--data", default="tokens.pt")
    parser.add_argument("--lr", type=float, default=2e-4)
    main(parser.parse_args())
