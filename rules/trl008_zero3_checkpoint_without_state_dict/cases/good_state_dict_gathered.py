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


def save_with_options(model, output_dir, safe=True):
    # The options are built here and hold the gathered state dict.
    options = {"safe_serialization": safe, "state_dict": accelerator.get_state_dict(model)}
    accelerator.unwrap_model(model).save_pretrained(output_dir, **options)


def save_weights_gathered_first(model, engine, output_dir):
    # get_state_dict gathers the partitions (every rank calls it); no module's own state_dict().
    state_dict = accelerator.get_state_dict(model)
    accelerator.save(state_dict, f"{output_dir}/pytorch_model.bin")
    with deepspeed.zero.GatheredParameters(list(engine.module.parameters()), modifier_rank=0):
        if engine.global_rank == 0:
            torch.save(engine.module.state_dict(), f"{output_dir}/engine.bin")


def save_optimizer(optimizer, output_dir):
    torch.save(optimizer.state_dict(), f"{output_dir}/optimizer.pt")


def save_other_objects(tokenizer, processor, output_dir):
    tokenizer.save_pretrained(output_dir)
    processor.save_pretrained(output_dir)
    torch.save({"step": 1}, f"{output_dir}/trainer_state.pt")
