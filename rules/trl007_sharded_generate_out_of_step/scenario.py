"""TRL007 runtime scenario: rank 0 alone generates samples from a ZeRO-3 model, and hangs.

Two ranks fine-tune a small GPT-2 for a few steps under DeepSpeed ZeRO-3 (built in the script with
``DeepSpeedPlugin(zero_stage=3)``); then the main process generates a sample from a prompt and
prints it, under ``if accelerator.is_main_process:``. Under ZeRO-3 each forward step of
``generate`` gathers the parameters from every rank: rank 0 waits in the first gather for rank 1,
which has gone on to ``wait_for_everyone``. The process group's timeout is short (``--timeout``
seconds, through accelerate's ``InitProcessGroupKwargs``) so that gloo raises instead of hanging
for the default 30 minutes. After ``trllint --fix`` every rank generates; rank 0 prints.

    accelerate launch --use_deepspeed --zero_stage 3 --num_processes 2 scenario.py --timeout 15
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
        deepspeed_plugin=DeepSpeedPlugin(zero_stage=3),
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
    prompt = tokens[:1, :4].to(accelerator.device)
    if accelerator.is_main_process:
        sample = unwrapped.generate(prompt, max_new_tokens=8, do_sample=False, pad_token_id=0)
        print(f"TRL007 sample {sample[0].tolist()}", flush=True)
    accelerator.wait_for_everyone()
    print(f"TRL007 rank={accelerator.process_index} done", flush=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
