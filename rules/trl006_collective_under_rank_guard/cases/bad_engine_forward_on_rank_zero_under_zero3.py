"""A DeepSpeed ZeRO-3 trainer that saves its own log-probabilities for offline analysis on rank 0
only: under ZeRO-3 the engine's forward gathers every layer's parameters from all ranks, and the
other ranks never join it."""

import argparse

import deepspeed
import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save_traces", action="store_true")
    args = parser.parse_args()
    ds_config = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}}
    model = torch.nn.Linear(1024, 1024)
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    for step in range(100):
        batch = torch.randn(4, 1024, device=engine.device)
        loss = engine(batch).pow(2).mean()
        engine.backward(loss)
        engine.step()
        if args.save_traces and dist.get_rank() == 0:
            with torch.no_grad():
                # expect: TRL006
                traces = engine(batch)
            torch.save(traces.cpu(), f"traces_{step}.pt")


if __name__ == "__main__":
    main()
