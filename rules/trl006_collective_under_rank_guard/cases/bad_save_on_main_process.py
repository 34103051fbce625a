import torch
from accelerate import Accelerator

accelerator = Accelerator()


def save_checkpoint(model, out_dir):
    # Only rank 0 writes the checkpoint.
    if accelerator.is_main_process:
        # gathers the shards under ZeRO-3 / FSDP
        # expect: TRL006
        state = accelerator.get_state_dict(model)
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(out_dir, state_dict=state, save_function=accelerator.save)


def save_with_wait_in_else(model, out_dir):
    if accelerator.is_main_process:
        # expect: TRL006
        state = accelerator.get_state_dict(model)
        torch.save(state, f"{out_dir}/model.pt")
    else:
        # expect: TRL006
        accelerator.wait_for_everyone()


def save_whole_model(model, out_dir):
    if accelerator.is_local_main_process:
        # expect: TRL006
        accelerator.save_model(model, out_dir)


def save_training_state(out_dir):
    if accelerator.is_main_process:
        # expect: TRL006
        accelerator.save_state(out_dir)
        print("saved")
