"""GRPO-style policy training under DeepSpeed ZeRO-3 (run.sh): every rank runs the trace forward
(the engine gathers its parameters from all of them), and only rank 0 writes the file."""

import argparse

import deepspeed
import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM

from logprob_utils import compute_logprobs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deepspeed_config", default="ds_config_zero3.json")
    parser.add_argument("--save_traces", action="store_true")
    args = parser.parse_args()
    deepspeed.init_distributed()
    policy = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
    engine, optimizer, _, _ = deepspeed.initialize(
        model=policy, model_parameters=policy.parameters(), config=args.deepspeed_config
    )
    for step in range(1000):
        input_ids = torch.randint(0, 32000, (4, 256), device=engine.device)
        attention_mask = torch.ones_like(input_ids)
        loss = -compute_logprobs(engine, input_ids, attention_mask).mean()
        engine.backward(loss)
        engine.step()
        if args.save_traces:
            traces = compute_logprobs(engine, input_ids, attention_mask)
            if dist.get_rank() == 0:
                torch.save(traces.cpu(), f"traces/step_{step}.pt")


if __name__ == "__main__":
    main()
