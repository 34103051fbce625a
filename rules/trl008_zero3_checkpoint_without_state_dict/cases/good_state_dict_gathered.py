"""ZeRO-3 checkpoints written the ways accelerate, TRL and DeepSpeed document: nothing to flag."""

import deepspeed
import torch
from accelerate import Accelerator, DeepSpeedPlugin
from accelerate.utils import DistributedType

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3, zero3_save_16bit_model=True))


def save_like_the_accelerate_example(model, tokenizer, output_dir):
    accelerator.wait_for_everyone()
    unwrapped_model = accelerator.unwrap_model(model)
    unwrapped_model.save_pretrained(
        output_dir,
        is_main_process=accelerator.is_main_process,
        save_function=accelerator.save,
        state_dict=accelerator.get_state_dict(model),
    )
    if accelerator.is_main_process:
        tokenizer.save_pretrained(output_dir)


def save_with_state_dict_first(model, output_dir):
    state_dict = accelerator.get_state_dict(model)
    if accelerator.is_main_process:
        accelerator.unwrap_model(model).save_pretrained(output_dir, state_dict=state_dict)


def save_gathered(engine, output_dir):
    # The parameters are whole inside GatheredParameters: state_dict() is the real one.
    with deepspeed.zero.GatheredParameters(list(engine.module.parameters()), modifier_rank=0):
        if engine.global_rank == 0:
            engine.module.save_pretrained(output_dir)


def save_by_backend(model, output_dir):
    if accelerator.distributed_type == DistributedType.DEEPSPEED:
        model.save_checkpoint(output_dir)
    else:
        accelerator.unwrap_model(model).save_pretrained(output_dir)


def save_adapter(model, output_dir, **kwargs):
    # A state dict may come in through **kwargs.
    accelerator.unwrap_model(model).save_pretrained(output_dir, **kwargs)


def save_other_objects(tokenizer, processor, output_dir):
    tokenizer.save_pretrained(output_dir)
    processor.save_pretrained(output_dir)
    torch.save({"step": 1}, f"{output_dir}/trainer_state.pt")
