#!/bin/bash
# The 8B model needs its parameters sharded too.
accelerate launch --use_deepspeed --zero_stage 3 --num_processes 8 train.py --model_name meta-llama/Llama-3.1-8B
