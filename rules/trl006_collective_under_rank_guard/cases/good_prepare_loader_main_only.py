"""The near miss of bad_reprepare_model_main_only.py: the main process prepares only a data
loader (for its own sample generation), which runs no collective; the model is saved from an
unwrapped copy and stays prepared on every rank."""

from accelerate import Accelerator


def train(args, model, optimizer, train_dataloader, sample_dataloader):
    accelerator = Accelerator()
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for step, batch in enumerate(train_dataloader, start=1):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % args.save_steps == 0:
            accelerator.save_state(f"{args.output_dir}/checkpoint-{step}")
            accelerator.wait_for_everyone()
            if accelerator.is_main_process and step == args.max_steps:
                accelerator.unwrap_model(model).save_pretrained(args.output_dir)
                sample_dataloader = accelerator.prepare(sample_dataloader)
                for batch in sample_dataloader:
                    print(accelerator.unwrap_model(model).generate(**batch, max_new_tokens=20))
