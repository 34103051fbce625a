#!/bin/bash
accelerate launch --multi_gpu --num_processes 8 train.py --config recipes/sft.yaml
