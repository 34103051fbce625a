import torch
import torch.distributed as dist


def save_then_sync(model, path, rank):
    # Rank 0 enters two barriers, the others none: both hang. Hoisting only the second would
    # leave rank 0 with two and the others with one, so that hoist is unsafe and says why.
    if rank == 0:
        torch.save(model.state_dict(), path)
        # expect: TRL006
        dist.barrier()
    if rank == 0:
        # expect: TRL006
        dist.barrier()
        print("saved")


def sync_after_report(rank, report):
    # The only barrier of the function: after the hoist every rank enters one, the safe fix stays.
    if rank == 0:
        # expect: TRL006
        dist.barrier()
        report()
