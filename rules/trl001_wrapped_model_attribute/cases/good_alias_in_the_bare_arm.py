"""The near miss of bad_prepared_encoders_looped.py's alias: the name is bound to the model in the
arm that handles a bare model (the other arm takes `.module` out of the wrapper), so after the
`if` it holds the bare model either way."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def evaluate(model, queries):
    if hasattr(model, "module"):
        eval_model = model.module
    else:
        eval_model = model
    encoder = eval_model.get_encoder()
    return encoder(queries)


def train(model, optimizer, loader, rank):
    dist.init_process_group("nccl")
    model = DistributedDataParallel(model.to(rank), device_ids=[rank])
    for batch in loader:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    evaluate(model, batch)
