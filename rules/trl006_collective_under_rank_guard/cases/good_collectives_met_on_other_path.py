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


def sharded_optimizer_step(params, state, rank, world_size, init_state, update):
    # Each rank updates its own slice of the parameters, then all gather every slice: a rank whose
    # parameter is new gathers early and skips the update; the others gather after it, and the
    # ranks with no parameter in this slice gather there too. Every rank gathers once per turn.
    padded = params + [torch.empty_like(params[-1])] * (world_size - len(params) % world_size)
    for base in range(0, len(params), world_size):
        if base + rank < len(params):
            p = params[base + rank]
            if p not in state:
                init_state(state, p)
                dist.all_gather(padded[base:base + world_size], padded[base + rank])
                continue
            update(state, p)
        dist.all_gather(padded[base:base + world_size], padded[base + rank])


def collect_results(part, rank, world_size, save, load, synchronize, collect_by_master=True):
    # With collect_by_master the other ranks leave before any later barrier; without it no rank
    # leaves, and every rank meets the last barrier: the exit and the barrier test the same flag.
    save(part, rank)
    synchronize()
    if collect_by_master and rank != 0:
        return None
    results = [load(i) for i in range(world_size)]
    if not collect_by_master:
        synchronize()
    return results
