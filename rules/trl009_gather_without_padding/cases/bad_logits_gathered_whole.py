"""A preference trainer logs the policy's logits gathered whole: each rank's batch is padded to its
own longest sequence, so the all-gather sees another shape on every rank (preview: the file does
not show how the loader pads)."""

import torch
import torch.nn.functional as F
from accelerate import Accelerator

accelerator = Accelerator()


def concatenated_forward(model, batch):
    input_ids = torch.cat([batch["chosen_input_ids"], batch["rejected_input_ids"]], dim=0)
    attention_mask = torch.cat([batch["chosen_attention_mask"], batch["rejected_attention_mask"]], dim=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    logps = torch.gather(F.log_softmax(logits[:, :-1], dim=-1), 2, input_ids[:, 1:].unsqueeze(2)).squeeze(2)
    half = batch["chosen_input_ids"].shape[0]
    return logps[:half].sum(-1), logps[half:].sum(-1), logits[:half], logits[half:]


def batch_metrics(model, batch):
    chosen_logps, rejected_logps, chosen_logits, rejected_logits = concatenated_forward(model, batch)
    loss = -F.logsigmoid(chosen_logps - rejected_logps).mean()
    metrics = {
        "logps/chosen": accelerator.gather_for_metrics(chosen_logps).mean().item(),
        # expect: TRL009
        "logits/chosen": accelerator.gather_for_metrics(chosen_logits).detach().mean().item(),
        # expect: TRL009
        "logits/rejected": accelerator.gather_for_metrics(rejected_logits.detach()).mean().item(),
    }
    return loss, metrics

