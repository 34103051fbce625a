"""TRL007 runtime scenario: every rank generates with ``synced_gpus=False`` under ZeRO-3, and hangs.

Two ranks fine-tune a small GPT-2 under DeepSpeed ZeRO-3, then each completes its own prompt
(``accelerator.split_between_processes``) up to ``max_length=12``. The prompts differ in length,
so rank 1 is done after two steps and rank 0 after eight. With ``synced_gpus=False`` rank 1 leaves
``generate`` for the barrier while rank 0's next forward step waits in ZeRO-3's parameter gather
for it; the process group's short timeout (``--timeout``) makes gloo raise. After ``trllint --fix
--unsafe-fixes`` (``synced_gpus=True``) rank 1 keeps running forward steps until rank 0 is done.

The DeepSpeed config frees each layer's gathered parameters after use
(``stage3_max_live_parameters`` / ``stage3_max_reuse_distance`` 0), as ZeRO-3 does on a model of
billions of parameters: this one is small enough to stay gathered with the defaults.

    accelerate launch --use_deepspeed --zero_stage 3 --num_processes 2 scenario_unsynced.py --timeout 15
"""

import argparse
from datetime import timedelta

import torch
from accelerate import Accelerator, DeepSpeedPlugin, InitProcessGroupKwargs
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

VOCAB = 1000
# Large enough that ZeRO-3 partitions the matrices (it keeps parameters under
# stage3_param_persistence_threshold, 1e5 elements by default, whole on every rank).
CONFIG = GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=VOCAB, n_positions=64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=15.0)
    args = parser.parse_args()

    # On CPU ranks accelerate must be told the backend (gloo), or it leaves it to DeepSpeed and
    # counts one process on each rank; on GPUs it is NCCL.
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    accelerator = Accelerator(
        deepspeed_plugin=DeepSpeedPlugin(hf_ds_config={
            "train_micro_batch_size_per_gpu": 2,
            "gradient_accumulation_steps": 1,
            # As on a model of billions of parameters: ZeRO-3 frees each layer's gathered
            # parameters after use and gathers them again at the next forward step.
            "zero_optimization": {"stage": 3, "stage3_max_live_parameters": 0, "stage3_max_reuse_distance": 0},
        }),
        kwargs_handlers=[InitProcessGroupKwargs(backend=backend, timeout=timedelta(seconds=args.timeout))],
    )
    torch.manual_seed(0)
    model = GPT2LMHeadModel(CONFIG)
    tokens = torch.randint(0, VOCAB, (8, 16), generator=torch.Generator().manual_seed(1))
    loader = DataLoader(tokens, batch_size=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    model.train()
    for batch in loader:
        loss = model(input_ids=batch, labels=batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()

    model.eval()
    unwrapped = accelerator.unwrap_model(model)
    # Each rank completes its own prompts; they differ in length, so the ranks reach max_length
    # after different numbers of steps.
    prompts = [tokens[0, :4].tolist(), tokens[1, :10].tolist()]
    with accelerator.split_between_processes(prompts) as mine:
        prompt = torch.tensor(mine, device=accelerator.device)
        completion = unwrapped.generate(prompt, max_length=12, do_sample=False, pad_token_id=0, synced_gpus=False)
    print(f"TRL007 rank={accelerator.process_index} completion {completion[0].tolist()}", flush=True)
    accelerator.wait_for_everyone()
    print(f"TRL007 rank={accelerator.process_index} done", flush=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
