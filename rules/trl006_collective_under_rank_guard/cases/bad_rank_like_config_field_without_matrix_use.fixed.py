"""`cfg.rank` and `config.rank` are this process's rank in many training scripts: with nothing
that makes it a matrix rank, a test on it is a rank test."""
import torch.distributed as dist


def finish(model, config, path):
    r = config.rank
    # expect: TRL006
    dist.barrier()
    model.save_pretrained(path)
