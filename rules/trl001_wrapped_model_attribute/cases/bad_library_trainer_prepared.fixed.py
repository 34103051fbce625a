"""PPO with a value head on TRL's PPOTrainer, which prepares the policy with accelerate in __init__."""

import math

import torch
from trl import PPOConfig, PPOTrainer
from trl.core import logprobs_from_logits


class ValueHeadPPOTrainer(PPOTrainer):
    def __init__(self, config: PPOConfig, reward_fn, **kwargs):
        PPOTrainer.__init__(self, config=config, **kwargs)
        self.reward_fn = reward_fn
        # expect: TRL001
        self.is_seq2seq = self.accelerator.unwrap_model(self.model).config.is_encoder_decoder

    def batched_forward_pass(self, model, queries, responses, model_inputs, return_logits=False, response_masks=None):
        batch_size = self.config.mini_batch_size
        all_logprobs, all_values, all_masks = [], [], []
        for i in range(math.ceil(len(queries) / batch_size)):
            inputs = {key: value[i * batch_size : (i + 1) * batch_size] for key, value in model_inputs.items()}
            logits, _, values = model(**inputs)
            # expect: TRL001
            if getattr(self.accelerator.unwrap_model(model).config, "model_type", None) == "chatglm":
                values = torch.transpose(values, 0, 1)
            logprobs = logprobs_from_logits(logits[:, :-1, :], inputs["input_ids"][:, 1:])
            all_logprobs.append(logprobs)
            all_values.append(values[:, :-1])
            all_masks.append(inputs["attention_mask"][:, 1:])
        return torch.cat(all_logprobs), None, torch.cat(all_values), torch.cat(all_masks)

    def rollout(self, query_tensors, **generation_kwargs):
        responses = self.generate(query_tensors, return_prompt=False, **generation_kwargs)
        rewards = [self.reward_fn(q, r) for q, r in zip(query_tensors, responses)]
        stats = self.step(query_tensors, responses, rewards)
        # expect: TRL001
        stats["model/max_positions"] = self.accelerator.unwrap_model(self.model).config.max_position_embeddings
        return stats


class CriticPPOTrainer(PPOTrainer):
    def __init__(self, config, **kwargs):
        super().__init__(config=config, **kwargs)
        self.kl_history = []

    def log_kl(self, stats):
        self.kl_history.append(stats["objective/kl"])
        # expect: TRL001
        return {"kl": sum(self.kl_history) / len(self.kl_history), "arch": self.accelerator.unwrap_model(self.model).config.architectures}
