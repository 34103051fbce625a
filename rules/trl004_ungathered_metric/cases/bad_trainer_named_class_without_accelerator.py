# "Trainer" in the name, but not transformers' Trainer: nothing sets self.accelerator, so the fix
# may not name it (AttributeError at run time); the finding comes without a fix.
import torch
import torch.distributed as dist

from .base import BaseTrainer


class RewardModelTrainer(BaseTrainer):
    def __init__(self, model, optimizer, loader, logger):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.logger = logger

    def train_epoch(self, epoch):
        for step, batch in enumerate(self.loader):
            chosen_rewards = self.model(batch["chosen_input_ids"])
            rejected_rewards = self.model(batch["rejected_input_ids"])
            loss = -torch.nn.functional.logsigmoid(chosen_rewards - rejected_rewards).mean()
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            accuracy = (chosen_rewards > rejected_rewards).float().mean()
            # expect: TRL004
            self.logger.log_metrics({"train/reward_accuracy": accuracy.item()}, step=step)
