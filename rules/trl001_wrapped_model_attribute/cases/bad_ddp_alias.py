import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model, batches):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    ddp_model = DDP(model.to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    for batch in batches:
        loss = ddp_model(**batch).loss
        loss.backward()
        optimizer.step()
    if rank == 0:
        # expect: TRL001
        ddp_model.save_pretrained("checkpoint")
    # expect: TRL001
    ddp_model.gradient_checkpointing_disable()
