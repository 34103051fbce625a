"""The near miss of good_fsdp_save_pretrained_given_full_state_dict.py: the full state dict is
gathered but not handed on, so ``save_pretrained`` through the wrapper writes the model's own
sharded parameters."""

import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from transformers import AutoModelForCausalLM


def save_model(local_rank, model, tokenizer, outpath):
    policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, policy):
        cpu_state = model.state_dict()
    if local_rank == 0:
        # expect: TRL001
        model.save_pretrained(outpath)
        torch.save(cpu_state, f"{outpath}/full_state.pt")
        tokenizer.save_pretrained(outpath)


def main(tokenizer, loader):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1", torch_dtype=torch.bfloat16)
    model = FSDP(model, device_id=torch.cuda.current_device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for batch in loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    save_model(local_rank, model, tokenizer, "outputs/final")
