"""accelerate's proposed option for loaders sharded already (huggingface/accelerate#4087): prepare
keeps the device placement and set_epoch, and does not cut the loader again."""

from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration
from torch.utils.data import DataLoader, DistributedSampler

accelerator = Accelerator(dataloader_config=DataLoaderConfiguration(already_sharded=True))


def loader(dataset, batch_size):
    sampler = DistributedSampler(dataset, num_replicas=accelerator.num_processes, rank=accelerator.process_index)
    return accelerator.prepare(DataLoader(dataset, batch_size=batch_size, sampler=sampler))
