# FSDP forwards attribute reads (model.config works), but its parameters are sharded:
# generate() through the wrapper runs on flat shards.
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def evaluate(model, prompt_ids):
    model = FSDP(model, use_orig_params=True)
    max_length = model.config.max_position_embeddings
    with torch.no_grad():
        # expect: TRL001
        return model.generate(prompt_ids, max_length=max_length)
