"""A diffusers-style script saves its state from the main process only. Under DeepSpeed or FSDP
that would hang, but its save hook pops the state dict accelerate hands it in `weights`, which
accelerate leaves empty under both: the script can save only under DDP or one process, where
save_state enters no collective. With the pop guarded (`if weights:`) it would be reported."""

import os

from accelerate import Accelerator


def main(args, unet, optimizer, lr_scheduler, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)

    def save_model_hook(models, weights, output_dir):
        if accelerator.is_main_process:
            for model in models:
                model.save_pretrained(os.path.join(output_dir, "unet"))
                # make sure to pop weight so that corresponding model is not saved again
                weights.pop()

    accelerator.register_save_state_pre_hook(save_model_hook)
    unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(unet, optimizer, train_dataloader, lr_scheduler)
    global_step = 0
    for epoch in range(args.num_train_epochs):
        for batch in train_dataloader:
            with accelerator.accumulate(unet):
                loss = unet(batch["pixel_values"]).mean()
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
                if accelerator.is_main_process and global_step % args.checkpointing_steps == 0:
                    accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
