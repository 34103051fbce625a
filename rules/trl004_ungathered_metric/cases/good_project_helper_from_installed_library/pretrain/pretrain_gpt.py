# trllint-settings: {"report-rank0-loss": true}
"""Megatron-style GPT pretraining step: the averaging helper comes from the installed Megatron
library (outside this project), which all-reduces over the data-parallel group. The project's own
helper only masks; its per-rank results go through the library's reduction before they are logged."""
import torch
import torch.distributed as dist
from megatron.training.utils import average_losses_across_data_parallel_group

from .data import masked_token_mean


def train_step(model, batch, optimizer, writer, iteration, z_loss_coeff=1e-4):
    tokens, labels, loss_mask = batch["tokens"], batch["labels"], batch["loss_mask"]
    logits = model(tokens)
    per_token_loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
    lm_loss = masked_token_mean(per_token_loss.float(), loss_mask)
    z_loss = masked_token_mean(torch.logsumexp(logits.float(), dim=-1) ** 2, loss_mask)
    (lm_loss + z_loss_coeff * z_loss).backward()
    optimizer.step()
    optimizer.zero_grad()
    reduced = average_losses_across_data_parallel_group([lm_loss.detach(), z_loss.detach()])
    if dist.get_rank() == 0:
        writer.add_scalar("lm-loss", reduced[0].item(), iteration)
        writer.add_scalar("z-loss", reduced[1].item(), iteration)
