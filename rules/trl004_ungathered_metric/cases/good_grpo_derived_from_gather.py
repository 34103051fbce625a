# GRPO gathers the rewards once; everything logged afterwards is derived from the gathered tensor.
import torch
from accelerate.utils import gather
from trl import GRPOTrainer


def nanstd(tensor):
    return torch.sqrt(torch.nanmean((tensor - torch.nanmean(tensor)) ** 2))


class RewardLoggingGRPOTrainer(GRPOTrainer):
    def _score_completions(self, inputs, rewards_per_func, completion_mask, is_eos):
        rewards_per_func = gather(rewards_per_func)
        rewards = (rewards_per_func * self.reward_weights.unsqueeze(0)).nansum(dim=1)
        mean_grouped_rewards = rewards.view(-1, self.num_generations).mean(dim=1)
        std_grouped_rewards = rewards.view(-1, self.num_generations).std(dim=1)

        mode = "eval" if self.control.should_evaluate else "train"
        agg_completion_mask = self.accelerator.gather_for_metrics(completion_mask.sum(1))
        self._metrics[mode]["completions/mean_length"].append(agg_completion_mask.float().mean().item())
        agg_terminated_with_eos = self.accelerator.gather_for_metrics(is_eos.any(dim=1))
        term_completion_mask = agg_completion_mask[agg_terminated_with_eos]
        clipped_completions_ratio = 1 - len(term_completion_mask) / len(agg_completion_mask)
        self._metrics[mode]["completions/clipped_ratio"].append(clipped_completions_ratio)
        for i, reward_func_name in enumerate(self.reward_func_names):
            self._metrics[mode][f"rewards/{reward_func_name}/mean"].append(torch.nanmean(rewards_per_func[:, i]).item())
            self._metrics[mode][f"rewards/{reward_func_name}/std"].append(nanstd(rewards_per_func[:, i]).item())
        self._metrics[mode]["reward"].append(mean_grouped_rewards.mean().item())
        self._metrics[mode]["reward_std"].append(std_grouped_rewards.mean().item())
        self._metrics[mode]["num_tokens"] = [self.state.num_input_tokens_seen]
        return rewards
