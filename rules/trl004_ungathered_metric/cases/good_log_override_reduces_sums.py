# Sums and counts are stored per rank; the base class's log() sums them across ranks and divides
# the global sums by the global counts: the logged means are the run's.
import torch
import torch.distributed as dist
from trl import KTOTrainer


class SumsThenCountsTrainer(KTOTrainer):
    def log(self, logs, start_time=None):
        train_eval = "train" if "loss" in logs else "eval"
        names = sorted(self._stored_metrics[train_eval])
        totals = torch.tensor([sum(self._stored_metrics[train_eval][n]) for n in names], device=self.accelerator.device)
        if dist.is_initialized():
            dist.all_reduce(totals, op=dist.ReduceOp.SUM)
        summed = dict(zip(names, totals.tolist()))
        for split in ("chosen", "rejected"):
            if summed.get(f"count/{split}"):
                logs[f"rewards/{split}"] = summed[f"rewards/{split}_sum"] / summed[f"count/{split}"]
        del self._stored_metrics[train_eval]
        return super().log(logs, start_time)


class MaskedKTOTrainer(SumsThenCountsTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        policy_chosen_logps, policy_rejected_logps, policy_kl_logps = self.forward(model, inputs)[:3]
        losses, chosen_rewards, rejected_rewards, kl = self.kto_loss(
            policy_chosen_logps, policy_rejected_logps, policy_kl_logps, *self.compute_ref_log_probs(inputs)
        )
        metrics = {}
        if len(chosen_rewards) > 0:
            metrics["rewards/chosen_sum"] = chosen_rewards.nansum().item()
            metrics["count/chosen"] = float(len(chosen_rewards))
        if len(rejected_rewards) > 0:
            metrics["rewards/rejected_sum"] = rejected_rewards.nansum().item()
            metrics["count/rejected"] = float(len(rejected_rewards))
        self.store_metrics(metrics, train_eval="train")
        loss = losses.nanmean()
        return (loss, metrics) if return_outputs else loss
