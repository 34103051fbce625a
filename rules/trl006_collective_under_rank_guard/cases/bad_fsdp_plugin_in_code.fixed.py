"""The script shards its model with an FSDP plugin of its own."""

import torch
from accelerate import Accelerator, FullyShardedDataParallelPlugin
from torch.distributed.fsdp import ShardingStrategy
from torch.distributed.fsdp.fully_sharded_data_parallel import FullStateDictConfig, StateDictType

fsdp_plugin = FullyShardedDataParallelPlugin(
    sharding_strategy=ShardingStrategy.FULL_SHARD,
    state_dict_type=StateDictType.FULL_STATE_DICT,
    state_dict_config=FullStateDictConfig(offload_to_cpu=True, rank0_only=True),
)
accelerator = Accelerator(fsdp_plugin=fsdp_plugin)


def save(model, path):
    accelerator.wait_for_everyone()
    # expect: TRL006
    accelerator.save_model(model, path, safe_serialization=True)
