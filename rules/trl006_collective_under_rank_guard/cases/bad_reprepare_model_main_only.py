"""At the last step the main process unwraps the model to save it, then prepares it again for
the final evaluation: under DDP, FSDP or DeepSpeed wrapping a model is a collective (DDP's
constructor broadcasts the parameters), which the other ranks never enter."""

from accelerate import Accelerator


def train(args, model, optimizer, train_dataloader, eval_dataloader):
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
                model = accelerator.unwrap_model(model)
                model.save_pretrained(args.output_dir)
                # expect: TRL006
                model = accelerator.prepare(model)
    model.eval()
    for batch in eval_dataloader:
        accelerator.gather_for_metrics(model(**batch).logits)
