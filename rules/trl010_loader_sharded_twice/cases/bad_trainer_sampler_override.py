"""A Trainer subclass that returns a DistributedSampler: transformers' Trainer puts it in the loader
it passes to accelerator.prepare (transformers#34365)."""

import torch
from torch.utils.data import DistributedSampler
from transformers import Trainer


class GroupedTrainer(Trainer):
    def _get_train_sampler(self, train_dataset=None):
        if self.args.world_size > 1:
            # expect: TRL010
            return DistributedSampler(self.train_dataset, shuffle=True, seed=self.args.seed)
        return torch.utils.data.RandomSampler(self.train_dataset)
