"""The near miss of bad_reprepare_model_main_only.py: the main process prepares a loader over a
dataset built around the tokenizer (bound from from_pretrained like a model, but no module):
preparing a loader runs no collective."""

from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoTokenizer

from data import PromptDataset


def train(args, model, optimizer, train_dataloader):
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for step, batch in enumerate(train_dataloader, start=1):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        prompts = PromptDataset(tokenizer, args.sample_prompts)
        sample_dataloader = accelerator.prepare(DataLoader(prompts, batch_size=4))
        for batch in sample_dataloader:
            print(tokenizer.batch_decode(accelerator.unwrap_model(model).generate(**batch, max_new_tokens=20)))
