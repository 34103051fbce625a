"""VQ tokenizer training: codebook usage, counted per rank, summed for the visualiser."""

import torch
import torch.distributed as dist

import dist_utils


def log_cluster_usage(quantizer, step, writer):
    usage = quantizer.usage_counts.float()
    if dist.get_rank() == 0 and step % 500 == 0:
        dist_utils.allreduce(usage, distributed=False)
        writer.add_histogram("codebook_usage", usage, step)
