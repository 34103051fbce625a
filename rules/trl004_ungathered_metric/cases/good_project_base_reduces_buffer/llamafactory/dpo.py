"""A DPO trainer on the project's base: it stores this rank's means, and the base's log() reduces
them across ranks; the margin it logs at once goes through the base's all-reduce helper."""
import torch
import torch.nn.functional as F

from .trainer_utils import PreferenceTrainer


class CustomDPOTrainer(PreferenceTrainer):
    def __init__(self, model, ref_model, beta=0.1, **kwargs):
        super().__init__(model=model, **kwargs)
        self.ref_model = ref_model
        self.beta = beta

    def concatenated_forward(self, model, batch):
        all_logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.float()
        labels = batch["labels"]
        all_logps = -F.cross_entropy(all_logits.transpose(1, 2), labels, ignore_index=-100, reduction="none").sum(-1)
        chosen_logps, rejected_logps = all_logps.split(batch["input_ids"].size(0) // 2, dim=0)
        return chosen_logps, rejected_logps

    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        policy_chosen_logps, policy_rejected_logps = self.concatenated_forward(model, batch)
        with torch.no_grad():
            reference_chosen_logps, reference_rejected_logps = self.concatenated_forward(self.ref_model, batch)
        chosen_rewards = self.beta * (policy_chosen_logps - reference_chosen_logps).detach()
        rejected_rewards = self.beta * (policy_rejected_logps - reference_rejected_logps).detach()
        losses = -F.logsigmoid(chosen_rewards - rejected_rewards)
        prefix = "eval_" if train_eval == "eval" else ""
        metrics = {
            f"{prefix}rewards/chosen": chosen_rewards.mean().item(),
            f"{prefix}rewards/rejected": rejected_rewards.mean().item(),
            f"{prefix}rewards/accuracies": (chosen_rewards > rejected_rewards).float().mean().item(),
        }
        return losses.mean(), metrics

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")
        self.store_metrics(metrics, train_eval="train")
        return loss

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        with torch.no_grad():
            chosen_logps, rejected_logps = self.concatenated_forward(model, inputs)
        margin = self._mean_across_ranks((chosen_logps - rejected_logps).mean())
        self.log({"logps/margin": margin.item()})
        return loss
