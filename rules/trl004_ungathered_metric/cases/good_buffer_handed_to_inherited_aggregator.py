# The buffer's per-rank means are averaged and handed to an aggregator this class inherits from a
# base the linter cannot read (`self._all_reduce_metric`, as a Megatron-backed GRPO trainer does):
# what reaches the logger may be the run's value, and nothing here says otherwise. Unknown is silent.
import torch

from trl import GRPOTrainer


class MegatronShortAnswerTrainer(GRPOTrainer):
    def _compute_loss(self, model, inputs):
        completion_mask = inputs["completion_mask"]
        per_token_logps = self._get_per_token_logps(model, inputs["input_ids"], inputs["attention_mask"], 8)
        ref_per_token_logps = inputs["ref_per_token_logps"]
        per_token_kl = torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1
        loss = ((per_token_kl * completion_mask).sum(-1) / completion_mask.sum(-1).clamp(min=1.0)).mean()
        mode = "eval" if self.control.should_evaluate else "train"
        mean_kl = (per_token_kl * completion_mask).sum() / completion_mask.sum()
        self._metrics[mode]["kl"].append(mean_kl.item())
        self._metrics[mode]["completion_length"].append(completion_mask.sum(1).float().mean().item())
        return loss

    def loss_func(self, loss, mode="train"):
        avg_metric = {"loss": loss.detach().clone()}
        if self._metrics[mode]:
            extra = {key: torch.tensor(sum(val) / len(val), device=loss.device) for key, val in self._metrics[mode].items()}
            avg_metric.update(extra)
            self._metrics[mode].clear()
        avg_metric = self._all_reduce_metric(avg_metric)
        return loss, avg_metric
