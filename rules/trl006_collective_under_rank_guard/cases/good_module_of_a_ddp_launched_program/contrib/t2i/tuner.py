"""LMFlow's text-to-image tuner: get_state_dict is a collective under FSDP or ZeRO-3 only, and the
one program that imports this module runs under DDP (run.sh beside it); the project's FSDP launch
of another program is no launch of this code."""

import torch
from accelerate import Accelerator


class DiffuserTuner:
    def __init__(self):
        self.accelerator = Accelerator()
        self.unet = torch.nn.Linear(4, 4)

    def tune(self, loader, steps, save_steps=100):
        unet, loader = self.accelerator.prepare(self.unet, loader)
        for step, batch in zip(range(steps), loader):
            self.accelerator.backward(unet(batch).mean())
            if self.accelerator.is_main_process and step % save_steps == 0:
                state = self.accelerator.get_state_dict(unet)
                torch.save(state, f"unet-{step}.pt")
