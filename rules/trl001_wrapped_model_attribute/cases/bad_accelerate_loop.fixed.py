import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM


def train(model_name, dataloader, steps):
    accelerator = Accelerator()
    model = AutoModelForCausalLM.from_pretrained(model_name)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    for step, batch in enumerate(dataloader):
        outputs = model(**batch)
        # expect: TRL001
        logits = outputs.logits[..., : accelerator.unwrap_model(model).config.vocab_size]
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten())
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step == steps:
            break
    accelerator.wait_for_everyone()
    # expect: TRL001
    accelerator.unwrap_model(model).save_pretrained("out", save_function=accelerator.save)
