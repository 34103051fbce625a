"""The near miss of good_tuple_element_reduced_in_helper.py: the logged elements of the returned
tuple are this rank's, whether the helper computes them from parameters named like data or from
parameters whose names say nothing (then the arguments the caller passes decide)."""
import torch.nn.functional as F
from transformers import Trainer


class MarginTrainer(Trainer):
    def margin_loss(self, chosen_logps, rejected_logps):
        margins = chosen_logps - rejected_logps
        baseline = self.accelerator.gather(margins.mean().detach()).mean()
        return -F.logsigmoid(margins - baseline), margins.detach(), baseline

    def spread(self, a, b):
        return (a - b).abs().mean(), a.std()

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        chosen_logps = model(**inputs["chosen"]).logits.log_softmax(-1).amax(-1).sum(-1)
        rejected_logps = model(**inputs["rejected"]).logits.log_softmax(-1).amax(-1).sum(-1)
        losses, margins, baseline = self.margin_loss(chosen_logps, rejected_logps)
        gap, deviation = self.spread(chosen_logps, rejected_logps)
        self.log(
            {
                "baseline": baseline.item(),
                # expect: TRL004
                "margin": margins.mean().item(),
                # expect: TRL004
                "gap": gap.item(),
            }
        )
        return losses.mean()
