# A GRPO subclass logging rewards from its parent's reward computation, which gathers across
# ranks before it returns (the linter cannot see it: unknown provenance stays silent).
import torch
from trl import GRPOTrainer


class LengthPenaltyGRPOTrainer(GRPOTrainer):
    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        prompts = [x["prompt"] for x in inputs]
        completions = self.processing_class.batch_decode(output["completion_ids"], skip_special_tokens=True)
        rewards_per_func = self._calculate_rewards(inputs, prompts, completions, output["completion_ids"].tolist())
        lengths = self._global_completion_lengths(output["completion_mask"])
        mode = "train" if self.model.training else "eval"
        for i, name in enumerate(self.reward_func_names):
            self._metrics[mode][f"rewards/{name}/mean"].append(torch.nanmean(rewards_per_func[:, i]).item())
        self._metrics[mode]["completions/mean_length"].append(lengths.float().mean().item())
        return output
