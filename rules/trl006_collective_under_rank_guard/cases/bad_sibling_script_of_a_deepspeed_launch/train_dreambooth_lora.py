"""DreamBooth LoRA, launched with the ZeRO-2 config its README names: checkpoints on every rank."""

from accelerate import Accelerator


def main(args, unet, optimizer, train_dataloader):
    accelerator = Accelerator()
    unet, optimizer, train_dataloader = accelerator.prepare(unet, optimizer, train_dataloader)
    for step, batch in enumerate(train_dataloader):
        loss = unet(batch).mean()
        accelerator.backward(loss)
        optimizer.step()
        if step % args.checkpointing_steps == 0:
            accelerator.save_state(f"{args.output_dir}/checkpoint-{step}")


if __name__ == "__main__":
    main(*[None] * 4)
