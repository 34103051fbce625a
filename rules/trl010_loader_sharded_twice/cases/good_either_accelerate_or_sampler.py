"""Scripts that take one sharding or the other, never both; and cuts that are not by rank."""

from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration
from torch.utils.data import DataLoader, DistributedSampler, get_worker_info


def build_loader(args, dataset, accelerator=None):
    if accelerator is not None:
        return accelerator.prepare(DataLoader(dataset, batch_size=args.batch_size, shuffle=True))
    sampler = DistributedSampler(dataset) if args.distributed else None
    return DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None)


def one_replica(dataset):
    accelerator = Accelerator()
    sampler = DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True)
    return accelerator.prepare(DataLoader(dataset, batch_size=4, sampler=sampler))


def worker_shards(dataset):
    accelerator = Accelerator()
    info = get_worker_info()
    part = dataset.shard(num_shards=info.num_workers, index=info.id)
    every_other = dataset[0::2]
    return accelerator.prepare(DataLoader(part, batch_size=4), DataLoader(every_other, batch_size=4))


def evaluation_split_by_hand(model, prompts):
    accelerator = Accelerator()
    # split_between_processes cuts the prompts once; nothing is prepared afterwards
    with accelerator.split_between_processes(prompts) as mine:
        return [model(prompt) for prompt in mine]


def sampler_from_a_flag(args, dataset):
    # `accelerate launch` leaves args.local_rank at -1 and sets no --distributed flag: the sampler
    # arm may never run under accelerate
    accelerator = Accelerator()
    sampler = DistributedSampler(dataset) if args.local_rank != -1 else None
    other = DistributedSampler(dataset) if args.distributed else None
    return accelerator.prepare(DataLoader(dataset, sampler=sampler), DataLoader(dataset, sampler=other))
