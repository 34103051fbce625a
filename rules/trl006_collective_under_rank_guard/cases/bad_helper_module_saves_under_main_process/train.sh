#!/bin/bash
accelerate launch --config_file configs/fsdp.yaml train.py --model_name meta-llama/Llama-3.2-3B --output_dir out/sft
