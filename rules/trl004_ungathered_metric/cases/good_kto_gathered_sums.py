# KTO-style: sums and counts gathered separately, divided when logging.
import torch
from trl import KTOTrainer


class SumKTOTrainer(KTOTrainer):
    def get_batch_loss_metrics(self, model, batch):
        metrics = {}
        losses, chosen_rewards, rejected_rewards, kl = self.kto_loss(*self.forward(model, batch)[:4])
        num_chosen = torch.Tensor([len(chosen_rewards)]).to(self.accelerator.device)
        all_num_chosen = self.accelerator.gather(num_chosen).sum().item()
        chosen_sum = self.accelerator.gather(chosen_rewards.nansum()).nansum().item()
        if all_num_chosen > 0:
            metrics["rewards/chosen_sum"] = chosen_sum
            metrics["rewards/chosen_mean"] = chosen_sum / all_num_chosen
            metrics["count/chosen"] = all_num_chosen
        metrics["kl"] = self.accelerator.reduce(kl, reduction="mean").item()
        return losses.nanmean(), metrics
