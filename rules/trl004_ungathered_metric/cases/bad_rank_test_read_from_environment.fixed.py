# The rank read from the launcher's environment is a rank test like accelerator.is_main_process:
# only rank 0 enters the branch, so a gather there waits for ranks that never come. The fix is
# offered as unsafe with that reason; under a test every rank answers alike it is safe.
import os

import torch
from accelerate import Accelerator


def train(model, optimizer, train_dataloader):
    accelerator = Accelerator(log_with="wandb")
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    ddp = int(os.environ.get("RANK", -1)) != -1  # nanoGPT's "is this a distributed run?"
    for batch in train_dataloader:
        outputs = model(**batch)
        accelerator.backward(outputs.loss)
        optimizer.step()
        optimizer.zero_grad()
        accuracy = (outputs.logits.argmax(-1) == batch["labels"]).float().mean()
        if os.environ["LOCAL_RANK"] == "0":
            # unsafe: only local rank 0 would reach the gather
            # expect: TRL004
            accelerator.log({"accuracy": accelerator.gather(accuracy).mean().item()})
        if int(os.environ.get("RANK", 0)) == 0:
            # unsafe: only rank 0 would reach the gather
            # expect: TRL004
            accelerator.log({"confidence": accelerator.gather(
                outputs.logits.amax(-1).mean()
            ).mean().item()})
        if ddp:
            # safe: every rank agrees on `ddp`, so every rank reaches the gather
            # expect: TRL004
            accelerator.log({"accuracy_all": accelerator.gather(
                accuracy
            ).mean().item()})
