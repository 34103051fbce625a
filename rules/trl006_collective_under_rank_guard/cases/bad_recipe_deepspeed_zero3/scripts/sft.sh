#!/bin/bash
ACCELERATE_LOG_LEVEL=info accelerate launch --num_processes 8 train.py --config recipes/sft_zero3.yaml
