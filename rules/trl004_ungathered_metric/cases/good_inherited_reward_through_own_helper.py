# The rewards come from the parent's _calculate_rewards (which gathers) through two helpers of this
# file that only forward its result: still unknown provenance, still silent.
import torch
from trl import GRPOTrainer
from trl.trainer.utils import nanstd


class AsyncRewardGRPOTrainer(GRPOTrainer):
    def _compute_rewards_for_batch(self, inputs, prompts, completions, completion_ids_list):
        return self._calculate_rewards(inputs, prompts, completions, completion_ids_list)

    def _collect_reward_workers(self, inputs, prompts, completions, completion_ids_list):
        args = (inputs, prompts, completions, completion_ids_list)
        if self._reward_pool is None:
            return self._compute_rewards_for_batch(*args)
        self._reward_pool.wait_for_workers()
        return self._compute_rewards_for_batch(*args)

    def _score_chunk(self, inputs, prompts, completions, completion_ids_list, mode):
        rewards_per_func = self._collect_reward_workers(inputs, prompts, completions, completion_ids_list)
        for i, name in enumerate(self.reward_func_names):
            self._metrics[mode][f"rewards/{name}/mean"].append(torch.nanmean(rewards_per_func[:, i]).item())
            self._metrics[mode][f"rewards/{name}/std"].append(nanstd(rewards_per_func[:, i]).item())
        agg_rewards = rewards_per_func.nansum(dim=1)
        self._metrics[mode]["reward"].append(agg_rewards.mean().item())
        return agg_rewards
