"""An auxiliary-loss tracker that sums per-layer values over the micro-batches and all-reduces them
before they are written, scaled by ``loss_scale`` (1 / the number of micro-batches). A scale or a
coefficient named after a loss is a setting every rank holds alike, not this rank's data."""
import torch
import torch.distributed as dist


class RouterLossTracker:
    totals: dict = {}

    @classmethod
    def add(cls, name, value, correct, total):
        for key, tensor in ((name, value), (name + "/correct", correct), (name + "/total", total)):
            cls.totals[key] = cls.totals.get(key, torch.zeros_like(tensor)) + tensor.detach()

    @classmethod
    def reduce(cls, group=None):
        for key in sorted(cls.totals):
            dist.all_reduce(cls.totals[key], group=group)

    @classmethod
    def write(cls, loss_scale, balance_coef, iteration, writer):
        cls.reduce()
        scaled = cls.totals["router"] * loss_scale
        correct = cls.totals.get("router/correct", torch.zeros_like(scaled))
        total = cls.totals.get("router/total", torch.ones_like(scaled))
        hit_rate = correct / total.clamp(min=1) * 100.0
        writer.add_scalar("router/hit_rate", hit_rate, iteration)
        writer.add_scalar("router/weighted", scaled * balance_coef, iteration)
