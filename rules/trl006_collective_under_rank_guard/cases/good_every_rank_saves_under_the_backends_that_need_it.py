"""A trainer that saves its checkpoint from the main process under DDP, and from every rank
under DeepSpeed or FSDP, where the save is a collective: the guard lets every rank in exactly
under the switches the save helper waits for everyone under, and its save_state is a collective
only under those backends."""

import os

from accelerate import Accelerator
from accelerate.utils import DistributedType


class ImageTrainer:
    def __init__(self, config, model, optimizer):
        self.config = config
        self.accelerator = Accelerator(gradient_accumulation_steps=config.gradient_accumulation_steps)
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)

    def save_checkpoint(self, output_dir, step):
        path = os.path.join(output_dir, f"checkpoint-{step}")
        distributed = self.accelerator.distributed_type != DistributedType.NO
        all_ranks_save = bool(getattr(self.config, "use_deepspeed", False) or getattr(self.config, "use_fsdp", False))
        if distributed and all_ranks_save:
            self.accelerator.wait_for_everyone()
        self.accelerator.save_state(path)
        return path

    def train(self, loader):
        for step, batch in enumerate(loader, start=1):
            with self.accelerator.accumulate(self.model):
                loss = self.model(**batch).loss
                self.accelerator.backward(loss)
                self.optimizer.step()
                self.optimizer.zero_grad()
            if step % self.config.checkpointing_steps == 0:
                if self.accelerator.is_main_process or self.config.use_deepspeed or self.config.use_fsdp:
                    self.save_checkpoint(self.config.output_dir, step)
