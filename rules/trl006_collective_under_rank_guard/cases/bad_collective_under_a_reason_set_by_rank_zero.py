"""A pretraining loop's cancel check: rank 0 alone decides whether the time limit is reached
and sets the reason; every rank agrees on the flag through a broadcast, but the extra steps are
broadcast only where the reason is set, which is rank 0 alone: rank 0 waits in the broadcast."""

import time

import torch
import torch.distributed as dist


def synchronize_value(value, device):
    tensor = torch.tensor(value, device=device)
    dist.broadcast(tensor, 0)
    return tensor.item()


class Trainer:
    def __init__(self, cfg, device):
        self.cfg = cfg
        self.device = device
        self.start_time = time.time()

    def check_if_cancelled(self):
        should_cancel = False
        cancel_reason = None
        extra_steps = 0
        if dist.get_rank() == 0:
            if time.time() - self.start_time >= self.cfg.time_limit:
                should_cancel = True
                cancel_reason = "time limit reached"
                extra_steps = self.cfg.extra_steps_after_cancel
        run_canceled = bool(synchronize_value(should_cancel, self.device))
        if run_canceled and cancel_reason is not None:
            # expect: TRL006
            extra_steps = synchronize_value(extra_steps, self.device)
        return run_canceled, extra_steps
