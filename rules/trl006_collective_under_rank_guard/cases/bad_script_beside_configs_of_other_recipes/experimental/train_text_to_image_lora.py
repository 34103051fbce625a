"""A diffusion script of its own beside the project's ZeRO-3 config for its DPO recipe (LMFlow's
RAFT example): no command says how the script is started, so the config shows only that the
project runs on several processes. save_state under the main process hangs under DeepSpeed or
FSDP: the finding stays, as the unproven kind (launch-unknown), in preview."""

from accelerate import Accelerator


def main(unet, optimizer, loader, output_dir, checkpointing_steps=500):
    accelerator = Accelerator()
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    for step, batch in enumerate(loader):
        accelerator.backward(unet(batch).mean())
        optimizer.step()
        if accelerator.is_main_process and step % checkpointing_steps == 0:
            # expect: TRL006
            accelerator.save_state(f"{output_dir}/checkpoint-{step}")


if __name__ == "__main__":
    main(None, None, [], "out")
