#!/bin/bash
accelerate launch --use_fsdp --num_processes 8 train.py --instance_data_dir ./dog --max_train_steps 800
