"""A DeepSpeed ZeRO-3 trainer whose log-probability helper runs the model it is handed; rank 0
alone calls it on the engine to save traces, so the engine's forward, which gathers every
layer's parameters from all ranks, is entered by rank 0 only."""

import argparse

import deepspeed
import torch
import torch.distributed as dist
import torch.nn.functional as F


def token_logprobs(model, input_ids):
    logits = model(input_ids)
    return F.log_softmax(logits.float(), dim=-1).amax(dim=-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save_traces", action="store_true")
    args = parser.parse_args()
    ds_config = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}}
    model = torch.nn.Sequential(torch.nn.Embedding(32000, 512), torch.nn.Linear(512, 32000))
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    for step in range(100):
        input_ids = torch.randint(0, 32000, (4, 128), device=engine.device)
        loss = -token_logprobs(engine, input_ids).mean()
        engine.backward(loss)
        engine.step()
        if args.save_traces and dist.get_rank() == 0:
            with torch.no_grad():
                # expect: TRL006
                traces = token_logprobs(engine, input_ids)
            torch.save(traces.cpu(), f"traces_{step}.pt")


if __name__ == "__main__":
    main()
