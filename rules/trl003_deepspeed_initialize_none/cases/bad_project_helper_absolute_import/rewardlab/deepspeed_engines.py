import deepspeed
import torch


def build_inference_engine(model: torch.nn.Module, ds_config: dict):
    ds_config = dict(ds_config, train_micro_batch_size_per_gpu=1)
    ds_config.pop("optimizer", None)
    ds_config.pop("scheduler", None)
    engine, _, _, _ = deepspeed.initialize(model=model, config=ds_config)
    return engine


def build_train_engine(args, model, optimizer, ds_config):
    return deepspeed.initialize(args=args, model=model, optimizer=optimizer, config=ds_config)
