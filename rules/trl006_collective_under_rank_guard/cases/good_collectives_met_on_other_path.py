"""Every rank enters the barrier once: the ranks that leave early meet it before they leave, the
others after the `if`; or the ranks take turns by parity; or rank 0 goes first in one mode."""
import torch
import torch.distributed as dist


def load_features(args, tokenizer, mode, build):
    # rank 0 builds the cache; the others wait for it, in training mode only
    if args.local_rank not in [-1, 0] and mode == "train":
        torch.distributed.barrier()
    features = build(tokenizer, mode)
    if args.local_rank == 0 and mode == "train":
        torch.distributed.barrier()
    return features


def download_once(rank, download):
    if rank != 0:
        dist.barrier()  # wait until rank 0 has the files, then read them
        return download(local_only=True)
    path = download(local_only=False)
    dist.barrier()
    return path


def load_in_two_waves(rank, load_checkpoint):
    # half the ranks read the checkpoint at a time, to spare the host's memory
    if rank % 2 == 0:
        dist.barrier()
    state = load_checkpoint()
    if rank % 2 == 1:
        dist.barrier()
    return state


def drain(loader, rank, step):
    for batch in loader:
        step(batch)
        if rank != 0:
            dist.barrier()
            continue
        dist.barrier()
