"""FSDP2 (fully_shard) training that saves a full checkpoint from rank 0: each parameter is a
DTensor, and full_tensor() collects its shards from every rank of the mesh."""

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor
from transformers import AutoModelForCausalLM


def train(loader, steps, output_path):
    dist.init_process_group("nccl")
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
    for layer in model.model.layers:
        fully_shard(layer)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    for step, batch in zip(range(steps), loader):
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    if dist.get_rank() == 0:
        # expect: TRL006
        state = {name: tensor.full_tensor() for name, tensor in model.state_dict().items()}
        torch.save(state, output_path)


def save_every_rank_assembles(model, output_path):
    # The near miss: every rank assembles the tensors, rank 0 alone writes.
    state = {name: tensor.full_tensor() for name, tensor in model.state_dict().items()}
    if dist.get_rank() == 0:
        torch.save(state, output_path)


def _unshard_if_dtensor(tensor):
    # Megatron's helper: whether it is handed a DTensor, and over which mesh, is its caller's.
    if isinstance(tensor, DTensor):
        return tensor.full_tensor()
    return tensor


def allreduce_embedding_grads(weight, embedding_group):
    if dist.get_rank() in dist.get_process_group_ranks(embedding_group):
        grad = _unshard_if_dtensor(weight.main_grad)
        dist.all_reduce(grad, group=embedding_group)
