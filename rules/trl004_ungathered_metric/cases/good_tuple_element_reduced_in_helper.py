"""A loss helper of this file returns a tuple, and the elements that are logged were made global
inside it: a KL baseline gathered and averaged over the ranks, and the running mean of a statistic
the trainer keeps (its ``update`` reduces across ranks). The other elements are this rank's, but an
element is read for what it holds, not for what its neighbours in the tuple hold."""
import torch
import torch.nn.functional as F
from transformers import Trainer


class UnpairedPreferenceTrainer(Trainer):
    def preference_loss(self, policy_logps, reference_logps, desirable):
        logratios = policy_logps - reference_logps
        if self.args.use_kl_baseline:
            baseline = self.accelerator.gather(logratios.mean().detach()).mean().clamp(min=0)
        else:
            baseline = torch.zeros((), device=policy_logps.device)
        losses = torch.where(desirable, 1 - F.sigmoid(logratios - baseline), 1 - F.sigmoid(baseline - logratios))
        return losses, logratios[desirable].detach(), logratios[~desirable].detach(), baseline

    def calibrated_loss(self, chosen_rewards, rejected_rewards):
        batch_reward = torch.cat((chosen_rewards, rejected_rewards)).mean().detach()
        self.reward_moments.update(batch_reward)  # sums and counts all-reduced inside
        shift = self.reward_moments.mean
        losses = torch.cat((-F.logsigmoid(chosen_rewards - shift), -F.logsigmoid(shift - rejected_rewards)))
        return losses, torch.as_tensor(shift)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        policy_logps = model(**inputs).logits.log_softmax(-1).amax(-1).sum(-1)
        with torch.no_grad():
            reference_logps = self.ref_model(**inputs).logits.log_softmax(-1).amax(-1).sum(-1)
        losses, chosen, rejected, kl = self.preference_loss(policy_logps, reference_logps, inputs["desirable"])
        calibrated, shift = self.calibrated_loss(chosen, rejected)
        self.log({"kl": kl.item(), "reward_shift": shift.item()})
        return losses.mean() + calibrated.mean()
