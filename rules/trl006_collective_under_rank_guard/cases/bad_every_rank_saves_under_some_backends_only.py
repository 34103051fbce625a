"""The near miss of good_every_rank_saves_under_the_backends_that_need_it.py: the save helper
waits for everyone in every distributed run, but the guard lets every rank in under DeepSpeed
only: under DDP or FSDP the main process waits alone."""

import os

from accelerate import Accelerator


class ImageTrainer:
    def __init__(self, config, model, optimizer):
        self.config = config
        self.accelerator = Accelerator()
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)

    def save_checkpoint(self, output_dir, step):
        path = os.path.join(output_dir, f"checkpoint-{step}")
        if self.accelerator.num_processes > 1:
            self.accelerator.wait_for_everyone()
        self.accelerator.save_state(path)
        return path

    def train(self, loader):
        for step, batch in enumerate(loader, start=1):
            loss = self.model(**batch).loss
            self.accelerator.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()
            if step % self.config.checkpointing_steps == 0:
                if self.accelerator.is_main_process or self.config.use_deepspeed:
                    # expect: TRL006
                    self.save_checkpoint(self.config.output_dir, step)
