"""A preference trainer built on a base class of another package: its loss function is inherited,
so its body is unknown, but it is called on this rank's log-probabilities, and what it returns
(the rewards beside the loss) is this rank's too. An unknown callee makes nothing global."""

import torch
from accelerate import Accelerator
from preference_core.trainer import PairwiseTrainerBase


class MarginPreferenceTrainer(PairwiseTrainerBase):
    def __init__(self, config, policy, reference):
        super().__init__(config)
        self.accelerator = Accelerator(log_with="wandb")
        self.policy, self.reference = self.accelerator.prepare(policy, reference)

    def _sequence_logps(self, model, input_ids, attention_mask, labels):
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
        token_logps = torch.log_softmax(logits.float(), dim=-1)
        picked = torch.gather(token_logps, 2, labels[:, 1:].unsqueeze(-1)).squeeze(-1)
        return (picked * attention_mask[:, 1:]).sum(-1)

    def training_step(self, batch, step):
        policy_logps = self._sequence_logps(self.policy, batch["input_ids"], batch["attention_mask"], batch["labels"])
        with torch.no_grad():
            ref_logps = self._sequence_logps(self.reference, batch["input_ids"], batch["attention_mask"], batch["labels"])
        loss, chosen_rewards, rejected_rewards = self._loss_fn(policy_logps, ref_logps)
        self.accelerator.backward(loss)
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.accelerator.log(
            {
                # expect: TRL004
                "rewards/chosen": chosen_rewards.mean().item(),
                # expect: TRL004
                "rewards/margin": (chosen_rewards - rejected_rewards).mean().item(),
                "step": step,
            },
            step=step,
        )
