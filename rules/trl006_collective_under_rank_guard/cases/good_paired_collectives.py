"""Every rank enters the same collectives, in the same order: accelerate's own shapes."""
from contextlib import contextmanager

import torch
import torch.distributed as dist
from accelerate import Accelerator

accelerator = Accelerator()


@contextmanager
def main_process_first(local_only=True):
    # The main process runs the body first; the others wait, then run it while it waits.
    is_main_process = dist.get_rank() == 0
    try:
        if not is_main_process:
            dist.barrier()
        yield
    finally:
        if is_main_process:
            dist.barrier()


@contextmanager
def torch_distributed_zero_first(local_rank):
    if local_rank not in [-1, 0]:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


def gather_to_rank_zero(value, world_size):
    value_tensor = torch.tensor(value)
    if dist.get_rank() != 0:
        dist.gather(value_tensor, dst=0)
    else:
        gathered = [torch.zeros_like(value_tensor) for _ in range(world_size)]
        dist.gather(value_tensor, gather_list=gathered, dst=0)
        return [t.item() for t in gathered]
    return None


def save(model, out_dir):
    if accelerator.is_main_process:
        state = accelerator.get_state_dict(model)
        torch.save(state, f"{out_dir}/model.pt")
    else:
        accelerator.get_state_dict(model)  # the other ranks join the gather and drop the result


def sync_trial(trainer, study, n_trials):
    if trainer.args.process_index == 0:

        def objective(trial):
            dist.broadcast_object_list([trial.params], src=0)
            return trainer.train(trial=trial)

        study.optimize(objective, n_trials=n_trials)
    else:
        for _ in range(n_trials):
            params = [None]
            dist.broadcast_object_list(params, src=0)
            trainer.train(trial=params[0])
