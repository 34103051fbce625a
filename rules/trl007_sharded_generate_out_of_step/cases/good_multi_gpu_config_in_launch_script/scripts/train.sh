#!/bin/bash
# Full fine-tuning on one node of 8 GPUs.
set -euo pipefail

MODEL=${MODEL:-Qwen/Qwen2.5-1.5B}

accelerate launch \
    --config_file configs/ddp.yaml \
    train.py \
    --model_name "$MODEL" \
    --output_dir outputs/sft
