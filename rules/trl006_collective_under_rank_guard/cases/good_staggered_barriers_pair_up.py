"""Ranks that take turns reading a shared cache: even ranks wait on entry, odd ranks on exit, so
every rank enters the barrier the same number of times and the pairs meet."""

import os

import torch
import torch.distributed as dist


def load_cached_features(cache_path, build_features):
    rank = dist.get_rank()
    if rank % 2 == 0:
        dist.barrier()  # odd ranks build or read first
    if os.path.exists(cache_path):
        features = torch.load(cache_path)
    else:
        features = build_features()
        torch.save(features, cache_path)
    if rank % 2 == 1:
        dist.barrier()  # let the even ranks in
    return features
