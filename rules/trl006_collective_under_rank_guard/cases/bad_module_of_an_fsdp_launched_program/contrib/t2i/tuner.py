"""The near miss of good_module_of_a_ddp_launched_program: the program that imports this tuner runs
under FSDP (run.sh beside it), where get_state_dict gathers the shards on every rank; the project's
DDP launch of another program does not make it safe."""

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
                # expect: TRL006
                state = self.accelerator.get_state_dict(unet)
                torch.save(state, f"unet-{step}.pt")
