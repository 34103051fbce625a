"""Main-process-only work that enters no collective, or collectives only the guarded ranks share."""
import torch.distributed as dist
from accelerate import Accelerator
from transformers import Trainer

accelerator = Accelerator()


def log_and_save(model, tokenizer, trainer, metrics, out_dir, args):
    if accelerator.is_main_process:
        accelerator.print(metrics)
        accelerator.save(model.state_dict(), f"{out_dir}/weights.pt")  # writes from the main process only
        tokenizer.save_pretrained(out_dir)
        trainer.save_state()  # Trainer.save_state writes trainer_state.json from rank 0, no collective
    if trainer.is_world_process_zero():
        # A Trainer made here exists on this rank only: nobody else is waited for.
        fake_trainer = Trainer(args=args, model=accelerator.unwrap_model(model))
        fake_trainer.save_model(out_dir)


def tensor_parallel_sync(tensor, rank, group_ranks, group):
    # A collective on a subgroup is entered by that group's members only.
    if rank in group_ranks:
        dist.all_reduce(tensor, group=group)
    if dist.get_rank() == 0:
        dist.barrier(group)


@accelerator.on_main_process
def write_summary(summary, path):
    with open(path, "w") as handle:
        handle.write(summary)


def per_rank_callback(accelerator_state):
    if accelerator_state.is_main_process:

        def later():  # defined here, called by every rank elsewhere
            accelerator.wait_for_everyone()

        return later
    return lambda: accelerator.wait_for_everyone()
