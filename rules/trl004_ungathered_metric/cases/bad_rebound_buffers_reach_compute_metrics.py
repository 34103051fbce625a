# Eval rewards kept for compute_metrics: each rank keeps only its own slice of the gathered
# rewards (`process_slice`), and log() hands the buffer to compute_metrics on every rank, whose
# result the main process logs as the whole eval set's. The texts kept beside them (`+= [...]`)
# are this rank's too.
import torch
from transformers import EvalPrediction
from trl import GRPOTrainer


class RewardMetricsTrainer(GRPOTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._eval_rewards = torch.empty(0, 2)
        self._eval_lengths = []

    def _score_eval_batch(self, inputs, rewards_per_func):
        process_slice = slice(
            self.accelerator.process_index * len(inputs),
            (self.accelerator.process_index + 1) * len(inputs),
        )
        local_rewards = rewards_per_func[process_slice]
        # expect: TRL004
        self._eval_rewards = torch.cat([self._eval_rewards, local_rewards.cpu()], dim=0)
        # expect: TRL004
        self._eval_lengths += [inputs["completion_mask"].sum(1).float().mean().item()]

    def log(self, logs, start_time=None):
        metrics = {}
        if len(self._eval_rewards):
            custom = self.compute_metrics(EvalPrediction(predictions=None, label_ids=self._eval_rewards))
            metrics.update({f"eval_{key}": value for key, value in custom.items()})
            metrics["eval_completion_length"] = sum(self._eval_lengths) / len(self._eval_lengths)
            self._eval_rewards = torch.empty(0, 2)
            self._eval_lengths = []
        logs = {**logs, **metrics}
        super().log(logs, start_time)
