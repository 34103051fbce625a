"""The near miss of bad_engine_forward_on_rank_zero_under_zero3.py: every rank runs the forward,
and only rank 0 writes the file."""

import deepspeed
import torch
import torch.distributed as dist


def main():
    ds_config = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}}
    model = torch.nn.Linear(1024, 1024)
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    for step in range(100):
        batch = torch.randn(4, 1024, device=engine.device)
        loss = engine(batch).pow(2).mean()
        engine.backward(loss)
        engine.step()
        with torch.no_grad():
            traces = engine(batch)
        if dist.get_rank() == 0:
            torch.save(traces.cpu(), f"traces_{step}.pt")


if __name__ == "__main__":
    main()
