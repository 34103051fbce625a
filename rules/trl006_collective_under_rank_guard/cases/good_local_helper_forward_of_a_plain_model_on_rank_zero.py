"""A DeepSpeed ZeRO-3 trainer whose rank 0 scores its samples with a small local reward model
through the same log-probability helper: that model is no engine, its forward waits for no rank."""

import deepspeed
import torch
import torch.distributed as dist
import torch.nn.functional as F


def token_logprobs(model, input_ids):
    logits = model(input_ids)
    return F.log_softmax(logits.float(), dim=-1).amax(dim=-1)


def main():
    ds_config = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}}
    model = torch.nn.Sequential(torch.nn.Embedding(32000, 512), torch.nn.Linear(512, 32000))
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    scorer = torch.nn.Sequential(torch.nn.Embedding(32000, 64), torch.nn.Linear(64, 32000)).to(engine.device)
    for step in range(100):
        input_ids = torch.randint(0, 32000, (4, 128), device=engine.device)
        loss = -token_logprobs(engine, input_ids).mean()
        engine.backward(loss)
        engine.step()
        if dist.get_rank() == 0:
            with torch.no_grad():
                scores = token_logprobs(scorer, input_ids)
            print(f"step {step}: score {scores.mean().item():.3f}")


if __name__ == "__main__":
    main()
