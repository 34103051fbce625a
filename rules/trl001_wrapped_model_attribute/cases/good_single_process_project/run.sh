#!/bin/bash
# Fits on one GPU.
CUDA_VISIBLE_DEVICES=0 python train.py --model_name Qwen/Qwen2.5-0.5B --sample_every 100
