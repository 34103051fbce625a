# The value passes through a helper of this file that all-reduces sums and counts before dividing
# (GRPO's global_masked_mean), and through a method that returns the gathered rewards.
import torch
from accelerate.utils import gather
from trl import GRPOTrainer


class MaskedMetricsGRPOTrainer(GRPOTrainer):
    def _calculate_rewards(self, inputs, completions):
        rewards_per_func = torch.zeros(len(completions), len(self.reward_funcs), device=self.accelerator.device)
        for i, reward_func in enumerate(self.reward_funcs):
            rewards_per_func[:, i] = torch.tensor(reward_func(completions=completions), dtype=torch.float32)
        return gather(rewards_per_func)

    def _compute_loss(self, model, inputs):
        mask = inputs["completion_mask"]
        per_token_logps = self._get_per_token_logps(model, inputs["input_ids"], inputs["attention_mask"], 8)
        entropies = -per_token_logps.exp() * per_token_logps

        def global_masked_mean(x):
            local_sum, local_count = (x * mask).sum(), mask.sum().float()
            totals = self.accelerator.reduce(torch.stack([local_sum, local_count]), reduction="sum")
            return (totals[0] / totals[1].clamp(min=1.0)).item()

        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["entropy"].append(global_masked_mean(entropies))
        rewards_per_func = self._calculate_rewards(inputs, inputs["completions"])
        self._metrics[mode]["reward"].append(rewards_per_func.nansum(dim=1).mean().item())
        return -(per_token_logps * mask).sum() / mask.sum()
