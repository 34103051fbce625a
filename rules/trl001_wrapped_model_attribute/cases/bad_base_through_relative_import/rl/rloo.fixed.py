import torch

from .base import OnPolicyTrainer


class RLOOTrainer(OnPolicyTrainer):
    @torch.no_grad()
    def rollout(self, queries):
        unwrapped = self.accelerator.unwrap_model(self.policy)
        responses = unwrapped.generate(queries, max_new_tokens=self.args.response_length)
        # expect: TRL001
        pad_id = self.accelerator.unwrap_model(self.policy).config.pad_token_id
        # the reference model was never prepared: its config is its own
        eos_id = self.ref_policy.config.eos_token_id
        return responses, pad_id, eos_id
