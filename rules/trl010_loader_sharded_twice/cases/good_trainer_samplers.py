"""Trainer subclasses whose samplers cover the whole dataset (the Trainer's prepare shards them)."""

import torch
from transformers import Trainer
from transformers.trainer_pt_utils import LengthGroupedSampler


class LengthGroupedTrainer(Trainer):
    def _get_train_sampler(self, train_dataset=None):
        if self.train_dataset is None:
            return None
        lengths = self.train_dataset["length"]
        return LengthGroupedSampler(self.args.train_batch_size, lengths=lengths)

    def _get_eval_sampler(self, eval_dataset):
        return torch.utils.data.SequentialSampler(eval_dataset)


class SeededTrainer(Trainer):
    def _get_train_sampler(self, train_dataset=None):
        generator = torch.Generator().manual_seed(self.args.seed)
        return torch.utils.data.RandomSampler(self.train_dataset, generator=generator)
