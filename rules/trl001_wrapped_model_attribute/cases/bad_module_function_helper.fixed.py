import torch
from accelerate import Accelerator


def log_samples(model, accelerator, prompt_ids):
    with torch.no_grad():
        # expect: TRL001
        samples = accelerator.unwrap_model(model).generate(prompt_ids, max_new_tokens=8)
    # expect: TRL001
    accelerator.print(accelerator.unwrap_model(model).name_or_path, samples.shape)


def train(model, optimizer, dataloader, prompt_ids):
    accelerator = Accelerator()
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    for batch in dataloader:
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    log_samples(model, accelerator, prompt_ids)
