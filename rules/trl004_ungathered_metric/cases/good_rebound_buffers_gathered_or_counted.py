# The same buffers, right: the rewards are kept whole (gathered on every rank before they are
# stored), the count is all-reduced in log() before it is logged, and a step counter bound the
# same way holds no rank's data.
import torch
from transformers import EvalPrediction
from trl import GRPOTrainer


class RewardMetricsTrainer(GRPOTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._eval_rewards = torch.empty(0, 2)
        self._eval_correct = 0
        self._eval_batches = 0

    def _score_eval_batch(self, inputs, rewards_per_func):
        process_slice = slice(
            self.accelerator.process_index * len(inputs),
            (self.accelerator.process_index + 1) * len(inputs),
        )
        local_rewards = rewards_per_func[process_slice]
        all_rewards = self.accelerator.gather(local_rewards)
        self._eval_rewards = torch.cat([self._eval_rewards, all_rewards.cpu()], dim=0)
        self._eval_correct += (local_rewards > 0).sum().item()
        self._eval_batches += 1

    def log(self, logs, start_time=None):
        metrics = {}
        if len(self._eval_rewards):
            custom = self.compute_metrics(EvalPrediction(predictions=None, label_ids=self._eval_rewards))
            metrics.update({f"eval_{key}": value for key, value in custom.items()})
            correct = torch.tensor(self._eval_correct, device=self.accelerator.device)
            metrics["eval_correct"] = self.accelerator.reduce(correct, reduction="sum").item()
            metrics["eval_batches"] = self._eval_batches
            self._eval_rewards = torch.empty(0, 2)
            self._eval_correct = 0
            self._eval_batches = 0
        logs = {**logs, **metrics}
        super().log(logs, start_time)
