"""Text-to-image LoRA: no command of the project launches it, so the sibling's DeepSpeed config
does not show how it runs: the finding is a preview one (launch-unknown), not backend-collective."""

from accelerate import Accelerator


def main(args, unet, optimizer, train_dataloader):
    accelerator = Accelerator()
    unet, optimizer, train_dataloader = accelerator.prepare(unet, optimizer, train_dataloader)
    for step, batch in enumerate(train_dataloader):
        loss = unet(batch).mean()
        accelerator.backward(loss)
        optimizer.step()
        if accelerator.is_main_process and step % args.checkpointing_steps == 0:
            # expect: TRL006
            accelerator.save_state(f"{args.output_dir}/checkpoint-{step}")


if __name__ == "__main__":
    main(*[None] * 4)
