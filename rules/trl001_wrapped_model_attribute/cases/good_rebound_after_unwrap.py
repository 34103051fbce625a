import torch
from accelerate import Accelerator


def train(model, optimizer, dataloader):
    accelerator = Accelerator()
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    for batch in dataloader:
        accelerator.backward(model(**batch).loss)
        optimizer.step()
    model = accelerator.unwrap_model(model)
    model.config.use_cache = True
    model.save_pretrained("final", is_main_process=accelerator.is_main_process)
