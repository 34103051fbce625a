import torch
from trl import DPOTrainer


class RewardLoggingTrainer(DPOTrainer):
    """Metrics moved to the CPU before they are logged: a gather of the CPU copy crashes under
    NCCL, so the fix gathers on the device and moves the result to the CPU after."""

    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        model_output = self.concatenated_forward(model, batch)
        losses, chosen_rewards, rejected_rewards = self.dpo_loss(
            model_output["chosen_logps"], model_output["rejected_logps"], batch["ref_chosen_logps"], batch["ref_rejected_logps"]
        )
        metrics = {}
        # expect: TRL004
        metrics["rewards/chosen"] = chosen_rewards.cpu().mean()
        # expect: TRL004
        metrics["rewards/margins"] = (chosen_rewards - rejected_rewards).detach().to("cpu").mean()
        # expect: TRL004
        metrics["rewards/accuracies"] = torch.tensor((chosen_rewards > rejected_rewards).tolist()).float().mean()
        return losses.mean(), metrics
