import os

import torch
from torch.nn.parallel import DistributedDataParallel


def run(model, batches):
    rank = int(os.environ["LOCAL_RANK"])
    ddp_model = DistributedDataParallel(model.to(rank), device_ids=[rank])
    eos = ddp_model.module.config.eos_token_id
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    for batch in batches:
        loss = ddp_model(**batch).loss
        loss.backward()
        optimizer.step()
    if rank == 0:
        ddp_model.module.save_pretrained("checkpoint")
    return eos
