# The same buffers, right: the rewards are gathered on every rank before they are kept, the
# lengths are handed whole to a method of the base the linter cannot read (ms-swift reduces its
# buffers so), and a running mean and a step counter are numbers, not buffers kept whole.
import torch
from transformers import EvalPrediction
from trl import GRPOTrainer


class RewardMetricsTrainer(GRPOTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._eval_rewards = torch.empty(0, 2)
        self._eval_lengths = []
        self._reward_mean = 0.0
        self._eval_batches = 0

    def _score_eval_batch(self, inputs, rewards_per_func):
        process_slice = slice(
            self.accelerator.process_index * len(inputs),
            (self.accelerator.process_index + 1) * len(inputs),
        )
        local_rewards = rewards_per_func[process_slice]
        all_rewards = self.accelerator.gather(local_rewards)
        self._eval_rewards = torch.cat([self._eval_rewards, all_rewards.cpu()], dim=0)
        self._eval_lengths += [inputs["completion_mask"].sum(1).float().mean().item()]
        self._reward_mean = 0.99 * self._reward_mean + 0.01 * all_rewards.mean().item()
        self._eval_batches += 1

    def log(self, logs, start_time=None):
        metrics = {}
        if len(self._eval_rewards):
            custom = self.compute_metrics(EvalPrediction(predictions=None, label_ids=self._eval_rewards))
            metrics.update({f"eval_{key}": value for key, value in custom.items()})
            metrics["eval_completion_length"] = self._all_reduce_mean(self._eval_lengths)
            metrics["eval_reward_mean"] = self._reward_mean
            metrics["eval_batches"] = self._eval_batches
            self._eval_rewards = torch.empty(0, 2)
            self._eval_lengths = []
        logs = {**logs, **metrics}
        super().log(logs, start_time)
