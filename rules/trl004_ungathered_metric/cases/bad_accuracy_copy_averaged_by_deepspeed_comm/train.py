"""The near miss of good_accuracy_averaged_in_place_by_deepspeed_comm/: the accuracy's
``.clone()`` is averaged over the ranks, a copy the script then drops, so the accuracy rank 0
logs is still its own."""

import argparse

import deepspeed
import torch
import wandb
from torch.utils.data import DataLoader, DistributedSampler

from model import DraftHead


parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed()
model = DraftHead()
model_engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
global_rank = deepspeed.comm.get_rank()
world_size = deepspeed.comm.get_world_size()
if global_rank == 0:
    wandb.init(project="draft-heads")
dataset = torch.utils.data.TensorDataset(torch.randn(512, 64), torch.randint(0, 4, (512,)))
train_loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset, num_replicas=world_size, rank=global_rank))

for epoch in range(3):
    epoch_acces = []
    for inputs, labels in train_loader:
        loss, acc = model_engine(inputs.to(model_engine.device), labels.to(model_engine.device))
        model_engine.backward(loss)
        model_engine.step()
        epoch_acces = epoch_acces + [acc]
    acc_i = torch.tensor(epoch_acces).cuda().mean()
    deepspeed.comm.all_reduce(acc_i.clone(), op=deepspeed.comm.ReduceOp.AVG)
    acc_i = acc_i.item()
    if global_rank == 0:
        # expect: TRL004
        wandb.log({"train/epochacc": acc_i})
