"""The near miss of good_scaled_tracker_values.py: the scale is a setting, but the values it
scales are this rank's (a parameter named like data, never reduced)."""
import torch
import torch.distributed as dist


def write_router_metrics(router_logits, loss_scale, iteration, writer):
    if dist.get_rank() == 0:
        hits = (router_logits.argmax(-1) == 0).float().mean() * loss_scale
        # expect: TRL004
        writer.add_scalar("router/hit_rate", hits, iteration)
        probabilities = torch.softmax(router_logits, dim=-1)
        # expect: TRL004
        writer.add_scalar("router/entropy_scaled", -(probabilities * probabilities.log()).sum(-1).mean() * loss_scale, iteration)
