"""A gather helper for context-parallel evaluation: a scalar goes through gather_for_metrics, a
tensor through gather and a reshape that keeps one copy per context-parallel group. The test
tells the two apart, but both arms run one all-gather, so every rank meets the others."""

import torch
from accelerate import Accelerator


def make_gather(accelerator: Accelerator, cp_size: int):
    def gather(tensor):
        if not isinstance(tensor, torch.Tensor) or tensor.ndim == 0:
            return accelerator.gather_for_metrics(tensor)
        gathered = accelerator.gather(tensor)
        gathered = gathered.reshape(-1, cp_size, *tensor.shape)[:, 0].reshape(-1, *tensor.shape[1:])
        state = accelerator.gradient_state
        if state.end_of_dataloader and state.remainder > 0:
            gathered = gathered[: state.remainder]
        return gathered

    return gather


def evaluate(model, eval_loader, accelerator: Accelerator, cp_size: int):
    gather = make_gather(accelerator, cp_size)
    losses = []
    for batch in eval_loader:
        with torch.no_grad():
            loss = model(**batch).loss
        losses.append(gather(loss.detach()))
    return torch.stack(losses).mean().item()
