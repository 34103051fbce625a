#!/bin/bash
accelerate launch --config_file configs/multi_gpu.yaml train.py --model_name Qwen/Qwen2.5-0.5B --output_dir out/sft
