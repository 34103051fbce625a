#!/bin/bash
export WANDB_PROJECT=alpaca
NPROC=${NPROC:-8}

torchrun --nproc_per_node=$NPROC --master_port=29500 train.py \
    --model_name_or_path meta-llama/Llama-3.2-1B \
    --deepspeed configs/ds_z3.json \
    --output_dir output/alpaca \
    --num_train_epochs 3
