"""Conditions every rank agrees on: the collective is entered by all ranks or by none."""
import torch.distributed as dist
from accelerate import Accelerator

accelerator = Accelerator()


def train(model, optimizer, loader, args, state):
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        if accelerator.sync_gradients:
            optimizer.step()
            if step % args.eval_steps == 0:
                losses = accelerator.gather_for_metrics(loss.detach().repeat(4))
                print(losses.mean())
        if args.do_eval and accelerator.num_processes > 1:
            accelerator.wait_for_everyone()
        if state.control.should_save:  # the Trainer's flag, set alike on every rank
            accelerator.save_state(args.output_dir)
        if step >= args.max_steps:
            break
    if args.local_rank != -1:  # "is this run distributed?": true on every rank or none
        dist.barrier()
    if args.local_rank is not None and dist.get_world_size() > 1:
        dist.barrier()
    if args.push_to_hub:
        accelerator.wait_for_everyone()


def every_rank_then_main(model, out_dir):
    state = accelerator.get_state_dict(model)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(out_dir, state_dict=state, save_function=accelerator.save)
    accelerator.wait_for_everyone()


def stop_together(loader, model):
    for batch in loader:
        loss = model(**batch).loss
        if loss.isnan():
            accelerator.set_trigger()  # this rank wants out
        if accelerator.check_trigger():  # every rank asks; all leave together
            break
        accelerator.backward(loss)
        accelerator.wait_for_everyone()
