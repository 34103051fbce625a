# FSDP forwards attribute reads to the wrapped module: config and generation_config are fine.
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def wrap(model):
    model = FSDP(model, use_orig_params=True)
    pad_token_id = model.config.pad_token_id
    max_new_tokens = model.generation_config.max_new_tokens
    return model, pad_token_id, max_new_tokens
