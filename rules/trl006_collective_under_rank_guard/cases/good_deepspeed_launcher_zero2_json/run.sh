#!/usr/bin/env bash
deepspeed --num_gpus 8 --master_port 29501 train.py \
    --deepspeed ds_config_zero2.json \
    --model_name_or_path meta-llama/Llama-3.2-1B \
    --output_dir ./checkpoints \
    --per_device_train_batch_size 4 \
    --bf16 True
