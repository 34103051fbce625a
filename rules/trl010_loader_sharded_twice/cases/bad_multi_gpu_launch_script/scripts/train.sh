#!/bin/bash
accelerate launch --multi_gpu --num_processes 4 train.py --epochs 10
