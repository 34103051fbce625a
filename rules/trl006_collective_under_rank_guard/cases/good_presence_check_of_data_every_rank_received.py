"""An online-feedback loop: rank 0 asks a judge for feedback and broadcasts it, so every rank
holds the same list and the presence check is the same on every rank; and prompts every rank
reads from the same file."""

import json

import torch
from accelerate import Accelerator
from accelerate.utils import broadcast_object_list

accelerator = Accelerator()


def collect_feedback(judge, prompts):
    for prompt in prompts:
        feedback_data = [None]
        if accelerator.is_main_process:
            feedback_data = [judge.score(prompt)]
        broadcast_object_list(feedback_data, from_process=0)
        if feedback_data[0] is None:
            continue
        accelerator.wait_for_everyone()


def train_on_prompts(model, optimizer, prompt_file):
    with open(prompt_file) as handle:
        records = [json.loads(line) for line in handle]
    for record in records:
        if record.get("prompt") is None:
            continue
        loss = model(torch.tensor(record["input_ids"], device=accelerator.device)).loss
        accelerator.backward(loss)
        optimizer.step()
        losses = accelerator.gather(loss.detach())
        accelerator.print(losses.mean().item())
