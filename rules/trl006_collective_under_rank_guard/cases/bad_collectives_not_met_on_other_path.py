"""The ranks that skip a barrier never meet it elsewhere: another mode, another parity, nothing after the exit."""
import torch
import torch.distributed as dist


def load_features(args, tokenizer, mode, build):
    if args.local_rank not in [-1, 0] and mode == "train":
        # expect: TRL006
        torch.distributed.barrier()
    features = build(tokenizer, mode)
    if args.local_rank == 0 and mode == "eval":
        # expect: TRL006
        torch.distributed.barrier()
    return features


def download_once(rank, download):
    if rank != 0:
        # expect: TRL006
        dist.barrier()
        return download(local_only=True)
    return download(local_only=False)


def load_in_three_waves(rank, load_checkpoint):
    if rank % 3 == 0:
        # expect: TRL006
        dist.barrier()
    state = load_checkpoint()
    if rank % 3 == 1:
        # expect: TRL006
        dist.barrier()
    return state


def sharded_optimizer_step(params, state, rank, world_size, init_state, update):
    # The gather after the early way is still under the rank test: the ranks with no parameter in
    # this slice never gather, and the others wait for them.
    padded = params + [torch.empty_like(params[-1])] * (world_size - len(params) % world_size)
    for base in range(0, len(params), world_size):
        if base + rank < len(params):
            p = params[base + rank]
            if p not in state:
                init_state(state, p)
                # expect: TRL006
                dist.all_gather(padded[base:base + world_size], padded[base + rank])
                continue
            update(state, p)
            # expect: TRL006
            dist.all_gather(padded[base:base + world_size], padded[base + rank])


def collect_results(part, rank, world_size, save, load, synchronize, collect_by_master=True, cleanup=False):
    # The last barrier tests another flag than the exit: with both set, the other ranks have left.
    save(part, rank)
    synchronize()
    if collect_by_master and rank != 0:
        return None
    results = [load(i) for i in range(world_size)]
    if cleanup:
        # expect: TRL006
        dist.barrier()
    return results
