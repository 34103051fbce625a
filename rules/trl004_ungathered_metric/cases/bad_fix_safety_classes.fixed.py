# Fixes that would fail or hang if written naively (issue #16): each is reduced on the rank first,
# cast when it may be an integer, and marked unsafe, with the reason, where a rank may skip it.
import torch
from trl import GRPOTrainer


class OnPolicyDistillTrainer(GRPOTrainer):
    def _compute_loss(self, model, inputs):
        position_ids = inputs["position_ids"]
        logits = model(input_ids=inputs["input_ids"]).logits
        completion_mask = inputs["completion_mask"]
        advantages = inputs["advantages"]
        mode = "train" if self.model.training else "eval"
        # An integer tensor: gathered as is, its mean() would raise.
        # expect: TRL004
        self._metrics[mode]["num_sequences"].append(self.accelerator.gather(
            (position_ids == 0).sum()
        ).sum().item())
        # expect: TRL004
        self._metrics[mode]["max_position"].append(self.accelerator.gather(
            position_ids.max()
        ).max().item() + 1)
        # A boolean-masked selection and full logits: a different shape per rank, gigabytes per step.
        # expect: TRL004
        self._metrics[mode]["advantage"].append(self.accelerator.gather(
            advantages[completion_mask.bool().any(1)].mean()
        ).mean().item())
        # expect: TRL004
        self._metrics[mode]["logits_mean"].append(self.accelerator.gather(
            logits.mean()
        ).mean().item())
        # The mean of the ranks' standard deviations is not the standard deviation over all ranks.
        # expect: TRL004
        self._metrics[mode]["advantage_std"].append(self.accelerator.gather(
            advantages.std()
        ).mean().item())
        valid_mask = completion_mask.bool()
        if valid_mask.any():
            # Only ranks with a valid token reach this line: a gather here would hang the others.
            # expect: TRL004
            self._metrics[mode]["valid_advantage"].append(self.accelerator.gather(
                advantages.unsqueeze(1)[valid_mask].mean()
            ).mean().item())
        # A Python int made from this rank's batch: no tensor to gather, so no fix.
        offset = max(position_ids.max().item() + 1, self.args.max_prompt_length)
        # expect: TRL004
        self._metrics[mode]["anchor_offset"].append(offset)
        loss = -(logits.log_softmax(-1).mean(-1) * completion_mask).sum() / completion_mask.sum()
        return loss

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        logits = model(**inputs).logits
        num_chosen = int(inputs["chosen_mask"].sum())
        if num_chosen == 0:
            return None, None, None
        # A rank with no chosen example has left: the others would wait at the gather.
        # expect: TRL004
        self._metrics["eval"]["chosen_logit"].append(self.accelerator.gather(
            logits[inputs["chosen_mask"]].mean()
        ).mean().item())
        total = 0.0
        for row in logits:
            total += row.max().item()
        # A Python number: there is no tensor left to gather.
        # expect: TRL004
        self.log({"eval/max_logit_total": total})
        return None, logits, None
