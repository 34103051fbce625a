# Two per-rank reductions in one logged expression: both need a gather.
from trl import CPOTrainer


class LoggedCPOTrainer(CPOTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, chosen_rewards, rejected_rewards = self.cpo_loss(*self.concatenated_forward(model, inputs)[:2])
        self.log(
            {
                # expect: TRL004
                "rewards/margins": self.accelerator.gather(
                    chosen_rewards.mean()
                ).mean().item() - self.accelerator.gather(
                    rejected_rewards.mean()
                ).mean().item(),
            }
        )
        return loss.mean()
