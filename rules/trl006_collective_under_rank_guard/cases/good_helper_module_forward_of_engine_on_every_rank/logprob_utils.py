"""Log-probabilities of the sampled tokens under a policy: the forward runs in _forward_for_logprobs."""

import torch
import torch.nn.functional as F


def _forward_for_logprobs(model, input_ids, attention_mask):
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    return logits[:, :-1].float()


def compute_logprobs(model, input_ids, attention_mask, temperature=1.0):
    # Every call runs the model's forward: under ZeRO-3 that gathers each layer's parameters
    # from all ranks, so every rank must make this call.
    with torch.no_grad():
        logits = _forward_for_logprobs(model, input_ids, attention_mask) / temperature
    logprobs = F.log_softmax(logits, dim=-1)
    return torch.gather(logprobs, 2, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
