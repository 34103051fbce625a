"""TRL008 runtime scenario: a ZeRO-3 run saves its model with ``save_pretrained`` and no state dict.

Two ranks train a small GPT-2 for a few steps under DeepSpeed ZeRO-3 (built in the script with
``DeepSpeedPlugin(zero_stage=3)``) and save it as transformers' ``no_trainer`` examples do:
``accelerator.unwrap_model(model).save_pretrained(out, is_main_process=..., save_function=
accelerator.save)``; then they print the trained model's loss on a probe batch. Under ZeRO-3
every large parameter of the unwrapped model is a placeholder of shape ``[0]``, so the checkpoint
holds no weights; after ``trllint --fix`` it passes ``state_dict=accelerator.get_state_dict(model)``, gathered on every rank.

    accelerate launch --use_deepspeed --zero_stage 3 --num_processes 2 scenario.py --out saved
"""

import argparse
from datetime import timedelta

import torch
from accelerate import Accelerator, DeepSpeedPlugin, InitProcessGroupKwargs
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

VOCAB = 1000
# Large enough that ZeRO-3 partitions the matrices: it keeps parameters under
# stage3_param_persistence_threshold (1e5 elements by default) whole on every rank.
CONFIG = GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=VOCAB, n_positions=64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="saved")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()

    # On CPU ranks accelerate must be told the backend (gloo), or it leaves it to DeepSpeed and
    # counts one process on each rank; on GPUs it is NCCL.
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    accelerator = Accelerator(
        deepspeed_plugin=DeepSpeedPlugin(zero_stage=3, zero3_save_16bit_model=True),
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

    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(args.out, is_main_process=accelerator.is_main_process, save_function=accelerator.save)
    accelerator.wait_for_everyone()
    accelerator.print("TRL008 saved")

    # The loss the saved model should give on a probe batch (a ZeRO-3 forward: every rank runs it).
    model.eval()
    with torch.no_grad():
        probe = tokens[:2].to(accelerator.device)
        probe_loss = model(input_ids=probe, labels=probe).loss.item()
    accelerator.print(f"TRL008 trained model: probe loss {probe_loss:.6f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
