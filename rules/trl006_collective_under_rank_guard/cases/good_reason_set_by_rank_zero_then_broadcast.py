"""The near miss of bad_collective_under_a_reason_set_by_rank_zero.py: the reason rank 0 sets is
broadcast too before the test reads it, so every rank holds the same reason and enters the
broadcast of the extra steps alike."""

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
        reasons = [cancel_reason]
        dist.broadcast_object_list(reasons, src=0)
        cancel_reason = reasons[0]
        if run_canceled and cancel_reason is not None:
            extra_steps = synchronize_value(extra_steps, self.device)
        return run_canceled, extra_steps
