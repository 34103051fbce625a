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
