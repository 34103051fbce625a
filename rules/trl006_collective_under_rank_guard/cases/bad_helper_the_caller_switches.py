"""A save method of the same class that synchronises only for a full save (consistency models'
train loop): rank 0 calling it with save_full=False enters no barrier; a full save from rank 0
alone waits in the barrier for ranks that never come."""

import torch
import torch.distributed as dist


class ConsistencyTrainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.step = 0

    def save(self, save_full=True):
        if dist.get_rank() == 0:
            torch.save(self.model.state_dict(), f"model{self.step:06d}.pt")
        if save_full:
            if dist.get_rank() == 0:
                torch.save(self.optimizer.state_dict(), f"opt{self.step:06d}.pt")
            dist.barrier()

    def run_loop(self, best_fid, fid):
        for batch in self.loader:
            self.model(batch).mean().backward()
            self.optimizer.step()
            self.step += 1
            if dist.get_rank() == 0:
                if fid < best_fid:
                    self.save(save_full=False)
            if dist.get_rank() == 0 and self.step % 10_000 == 0:
                # expect: TRL006
                self.save()


def save_checkpoint(accelerator, directory, sync=True):
    accelerator.save_state(directory)
    if sync:
        accelerator.wait_for_everyone()


def end_of_epoch(accelerator, directory):
    if accelerator.is_main_process:
        # Switched off, the barrier is not entered; save_state still is, a collective under
        # DeepSpeed or FSDP only (no launch says which: the unproven kind).
        # expect: TRL006
        save_checkpoint(accelerator, directory, sync=False)
