# GRPO-style metric buffers: the KL and the completion length are this rank's own.
import torch
from trl import GRPOTrainer


class ShortAnswerGRPOTrainer(GRPOTrainer):
    def _compute_loss(self, model, inputs):
        completion_mask = inputs["completion_mask"]
        per_token_logps = self._get_per_token_logps(model, inputs["input_ids"], inputs["attention_mask"], 8)
        ref_per_token_logps = inputs["ref_per_token_logps"]
        per_token_kl = torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1
        per_token_loss = -per_token_logps * inputs["advantages"].unsqueeze(1) + self.beta * per_token_kl
        loss = ((per_token_loss * completion_mask).sum(-1) / completion_mask.sum(-1).clamp(min=1.0)).mean()

        mode = "eval" if self.control.should_evaluate else "train"
        mean_kl = (per_token_kl * completion_mask).sum() / completion_mask.sum()
        # expect: TRL004
        self._metrics[mode]["kl"].append(self.accelerator.gather(mean_kl).mean().item())
        completion_length = self.accelerator.gather(
            completion_mask.sum(1).float().mean()
        ).mean().item()
        # expect: TRL004
        self._metrics[mode]["completion_length"].append(completion_length)
        self._metrics[mode]["beta"].append(self.beta)
        # Padded to a different length on each rank: gather each rank's count, then add them up.
        # expect: TRL004
        self._metrics[mode]["num_tokens"] = [self.accelerator.gather(
            inputs["attention_mask"].sum()
        ).sum().item()]
        return loss
