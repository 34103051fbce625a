# log() all-reduces a loss total, but the per-step metrics buffer is averaged on each rank only:
# what was stored in it is still rank 0's slice.
import torch
import torch.distributed as dist
from trl import GRPOTrainer


class WeightedOPDTrainer(GRPOTrainer):
    def _compute_loss(self, model, inputs):
        per_token_logps = self._get_per_token_logps(model, inputs["input_ids"], inputs["attention_mask"], 8)
        advantages = inputs["advantages"].unsqueeze(1) * inputs["completion_mask"]
        loss = -(per_token_logps * advantages).sum() / inputs["completion_mask"].sum()
        self._loss_total += loss.detach().item()
        mode = "train" if self.model.training else "eval"
        # expect: TRL004
        self._metrics[mode]["opd/mean_advantage"].append(advantages.mean().item())
        return loss

    def log(self, logs, start_time=None):
        mode = "train" if self.model.training else "eval"
        metrics = {key: sum(val) / len(val) for key, val in self._metrics[mode].items()}
        total = torch.tensor([self._loss_total], device=self.accelerator.device)
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        logs["opd_loss"] = total.item() / self.accelerator.num_processes
        logs.update(metrics)
        super().log(logs, start_time)
        self._metrics[mode].clear()
