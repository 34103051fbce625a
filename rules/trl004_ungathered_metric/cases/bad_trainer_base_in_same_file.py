# The base class in the same file sets self.accelerator, so a subclass's fix may name it; a
# subclass of TRL's DPOTrainer inherits it from transformers' Trainer.
from accelerate import Accelerator
from trl import DPOTrainer


class BasePreferenceTrainer:
    def __init__(self, model, optimizer, loader):
        self.accelerator = Accelerator()
        self.model, self.optimizer, self.loader = self.accelerator.prepare(model, optimizer, loader)


class MarginTrainer(BasePreferenceTrainer):
    def step(self, batch):
        chosen_rewards, rejected_rewards = self.model(**batch)
        margins = chosen_rewards - rejected_rewards
        # expect: TRL004
        self.accelerator.log({"train/margin": margins.mean().item()})


class SimPOStyleTrainer(DPOTrainer):
    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        chosen_logps, rejected_logps = self.concatenated_forward(model, batch)
        losses = -(chosen_logps - rejected_logps).sigmoid().log()
        metrics = {}
        # expect: TRL004
        metrics["logps/chosen"] = chosen_logps.detach().mean().cpu()
        return losses.mean(), metrics
